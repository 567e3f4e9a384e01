"""Issue 35: where citewise's SciFact build goes, every vector in the embedding cache.

    CITEWISE_HOME=/work/scratch/peers/home python -m benchmarks.build_split \\
        /work/shared/data/scifact --rounds 3 --main-src /tmp/main-src/src \\
        --out benchmarks/build-split.json

The build is ``benchmarks/peers.py``'s: ``KnowledgeBase.add_sections`` of all 5,183 documents
with the embedding cache of ``CITEWISE_HOME`` holding every window vector (run ``peers.py``
first: its prepare step fills it). Each round runs, in fresh processes, this tree with its
window cache as the cache holds it (``warm``), this tree with the window cache emptied in a
copy of the cache (``cold``: windows cut by the tokenizer, as the first build after an
upgrade) and, with ``--main-src``, another tree (``main``). Rounds interleave, in rotated
orders. Each build reports its wall time and the wall time of its stages: parse + chunk,
windows + vector cache reads, the store's apply (writing chunks, keyword indexes, vectors).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

STAGES = {
    "parse_chunk": ("citewise.kb.ingest", None, "_chunked"),
    "windows_vectors": ("citewise.kb.ingest", None, "_embedded"),
    "vector_cache_reads": ("citewise.embedding.cache", "EmbeddingCache", "get_many"),
    "store_apply": ("citewise.store.sqlite", "SQLiteStore", "_apply"),
}


def _timed(spent: dict[str, float], label: str, owner: Any, name: str) -> None:
    inner: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - started

    setattr(owner, name, wrapper)


def build_once(dataset: Path, work: Path) -> dict[str, float]:
    """One build in this process: its wall time and its stages' (seconds)."""
    import importlib

    from citewise.config import Settings
    from citewise.evaluation.beir import load_beir
    from citewise.kb import KnowledgeBase, Library
    from citewise.models import Section

    spent: dict[str, float] = {}
    for label, (module, cls, name) in STAGES.items():
        owner = importlib.import_module(module)
        _timed(spent, label, getattr(owner, cls) if cls else owner, name)
    corpus, _, _ = load_beir(dataset, "test")
    store = work / "store"
    library = Library(Settings.from_env().with_overrides(store_url=f"sqlite:///{store}"))
    kb = KnowledgeBase("scifact", library=library, embedder=library.embedder("minilm"))
    documents = {
        d: [Section(d, t or d, (t or d,), 1, "", d, d, text)] for d, (t, text) in corpus.items()
    }
    started = time.perf_counter()
    kb.add_sections(documents)
    wall = time.perf_counter() - started
    library.close()
    return {"build_seconds": round(wall, 3)} | {k: round(v, 3) for k, v in spent.items()}


def _child(stack: str, args: argparse.Namespace, home: Path) -> dict[str, float]:
    env = dict(os.environ)
    if stack == "cold":
        # A copy of the cache without its cut windows: the vectors are all there.
        cold = home / "cold-home"
        shutil.rmtree(cold, ignore_errors=True)
        cold.mkdir(parents=True)
        source = sqlite3.connect(Path(env["CITEWISE_HOME"]) / "embedding-cache.sqlite")
        copy = sqlite3.connect(cold / "embedding-cache.sqlite")
        source.backup(copy)
        source.close()
        copy.execute("DELETE FROM windows")
        copy.commit()
        copy.close()
        env["CITEWISE_HOME"] = str(cold)
    if stack == "main":
        env["PYTHONPATH"] = str(args.main_src.resolve())
    with tempfile.TemporaryDirectory(prefix="build-split-", dir=home) as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.build_split", str(args.dataset), "--one", tmp],
            capture_output=True, text=True, check=True, env=env,
            cwd=Path(__file__).resolve().parents[1],
        )  # fmt: skip
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--main-src", type=Path, help="another tree's src: the main stack")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # a child: one build here
    args = parser.parse_args()
    if args.one:
        print(json.dumps(build_once(args.dataset, args.one)))
        return
    home = Path(os.environ["CITEWISE_HOME"])
    stacks = ["warm", "cold"] + (["main"] if args.main_src else [])
    rounds: dict[str, list[dict[str, float]]] = {s: [] for s in stacks}
    for r in range(args.rounds):
        for stack in stacks[r % len(stacks) :] + stacks[: r % len(stacks)]:
            rounds[stack].append(_child(stack, args, home))
            print(r, stack, rounds[stack][-1], flush=True)
    report: dict[str, Any] = {"dataset": str(args.dataset), "rounds": args.rounds, "stacks": {}}
    for stack, runs in rounds.items():
        keys = sorted({k for run in runs for k in run})
        report["stacks"][stack] = {
            k: round(statistics.median(run.get(k, 0.0) for run in runs), 3) for k in keys
        } | {"rounds": runs}
    warm = report["stacks"]["warm"]["build_seconds"]
    report["ratios_build"] = {
        s: round(warm / v["build_seconds"], 3) for s, v in report["stacks"].items()
    }
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
