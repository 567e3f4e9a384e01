"""Identifier lookups (env vars, flags, dotted names, config keys, functions): the defining section.

``run`` searches each case of ``tests/data/{lgos,requests}-identifier-cases.json`` in every
mode over knowledge bases ``lgos`` and ``requests`` of the store the environment names
(``CITEWISE_HOME`` / ``CITEWISE_STORE_URL``), and finds the rank of the first hit on one of
the case's answering sections (``page#anchor``); then the standard sets through
``citewise eval --retrieval-only`` (LGOS 56 cases, the dev cases, requests) on the same
knowledge bases. ``report`` puts two runs side by side (same machine, same run: a baseline
and a change) as ``benchmarks/identifiers.md`` and ``.json``.

    python benchmarks/identifiers.py run --tag main --output /tmp/ident/main
    python benchmarks/identifiers.py report /tmp/ident/main /tmp/ident/new
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
DATA = ROOT / "tests" / "data"
IDENTIFIER_SETS = {"lgos": DATA / "lgos-identifier-cases.json",
                   "requests": DATA / "requests-identifier-cases.json"}  # fmt: skip
STANDARD_SETS = {  # name → (knowledge base, cases)
    "lgos-56": ("lgos", DATA / "lgos-cases.json"),
    "lgos-dev": ("lgos", SHARED / "lgos-dev-cases.json"),
    "requests": ("requests", DATA / "requests-cases.json"),
}  # fmt: skip
MODES = {"keyword": "full_text", "hybrid": "hybrid", "vector": "vector"}
TOP_K = 10


def _rank(hits: list[Any], anchors: list[str]) -> int | None:
    wanted = set(anchors)
    for index, hit in enumerate(hits, start=1):
        chunk = hit.chunk
        if chunk.page + (f"#{chunk.anchor}" if chunk.anchor else "") in wanted:
            return index
    return None


def _figures(ranks: list[int | None]) -> dict[str, float]:
    n = max(len(ranks), 1)
    return {
        "cases": len(ranks),
        "first": sum(r == 1 for r in ranks) / n,
        "recall@3": sum(r is not None and r <= 3 for r in ranks) / n,
        "mrr@10": sum(1 / r for r in ranks if r is not None) / n,
    }


def run(tag: str, output: Path) -> None:
    from citewise.kb import KnowledgeBase

    output.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"tag": tag, "identifiers": {}, "standard": {}}
    all_ranks: dict[str, list[int | None]] = {mode: [] for mode in MODES}
    for kb_name, path in IDENTIFIER_SETS.items():
        kb = KnowledgeBase(kb_name)
        cases = json.loads(path.read_text(encoding="utf-8"))
        per_mode = {}
        for mode, search_type in MODES.items():
            detail = []
            started = time.perf_counter()
            for case in cases:
                hits = kb.search(case["messages"][-1]["content"], top_k=TOP_K,
                                 search_type=search_type)  # fmt: skip
                found = _rank(hits, case["anchors"][0])
                detail.append({"case": case["id"], "kind": case["kind"], "form": case["form"],
                               "rank": found})  # fmt: skip
            ranks = [d["rank"] for d in detail]
            all_ranks[mode] += ranks
            seconds = time.perf_counter() - started
            per_mode[mode] = {"figures": _figures(ranks), "cases": detail,
                              "ms_per_query": round(1000 * seconds / len(cases), 1)}  # fmt: skip
        result["identifiers"][kb_name] = per_mode
    result["identifiers"]["all"] = {m: {"figures": _figures(r)} for m, r in all_ranks.items()}
    for name, (kb_name, cases_path) in STANDARD_SETS.items():
        target = output / f"eval-{name}"
        subprocess.run(
            [sys.executable, "-m", "citewise", "eval", str(cases_path), "--kb", kb_name,
             "--retrieval-only", "--output", str(target)],
            check=True, env=dict(os.environ),
        )  # fmt: skip
        data = json.loads((target / "results.json").read_text(encoding="utf-8"))
        result["standard"][name] = {m: v["figures"] for m, v in data["modes"].items()}
    (output / "identifiers.json").write_text(json.dumps(result, indent=1) + "\n", "utf-8")


def report(runs: list[Path], out: Path) -> None:
    loaded = [json.loads((r / "identifiers.json").read_text(encoding="utf-8")) for r in runs]
    tags = [r["tag"] for r in loaded]
    lines = ["# Identifier lookups: the defining section first", "",
             "- command: `python benchmarks/identifiers.py run` per tree, then "
             f"`report` ({' vs '.join(tags)}; same machine, same knowledge bases, one after "
             "the other)",
             "- a case is found when a hit is one of its answering sections (`page#anchor`); "
             f"top {TOP_K}; `first` = share of cases whose first hit is one", ""]  # fmt: skip
    lines += ["| set | mode | " + " | ".join(f"{t} first | {t} MRR@10" for t in tags) + " |",
              "| --- | --- |" + " ---: | ---: |" * len(tags)]  # fmt: skip
    for kb_name in [*IDENTIFIER_SETS, "all"]:
        for mode in MODES:
            cells = []
            for r in loaded:
                f = r["identifiers"][kb_name][mode]["figures"]
                cells += [f"{f['first']:.3f}", f"{f['mrr@10']:.3f}"]
            n = loaded[0]["identifiers"][kb_name][mode]["figures"]["cases"]
            lines.append(f"| {kb_name} ({n}) | {mode} | " + " | ".join(cells) + " |")
    lines += ["", "Standard sets (page-level, `citewise eval --retrieval-only`):", "",
              "| set | mode | " + " | ".join(f"{t} recall@3 | {t} MRR" for t in tags) + " |",
              "| --- | --- |" + " ---: | ---: |" * len(tags)]  # fmt: skip
    for name in STANDARD_SETS:
        for mode in MODES:
            cells = []
            for r in loaded:
                f = r["standard"][name][mode]
                cells += [f"{f['recall@3']:.3f}", f"{f['mrr']:.3f}"]
            lines.append(f"| {name} | {mode} | " + " | ".join(cells) + " |")
    last = loaded[-1]
    lines += ["", f"Cases whose defining section is not first ({tags[-1]}, hybrid / keyword):", ""]
    for kb_name in IDENTIFIER_SETS:
        hybrid = last["identifiers"][kb_name]["hybrid"]["cases"]
        keyword = last["identifiers"][kb_name]["keyword"]["cases"]
        for h, k in zip(hybrid, keyword, strict=True):
            if h["rank"] != 1 or k["rank"] != 1:
                lines.append(f"- {kb_name} `{h['case']}` ({h['kind']}, {h['form']}): "
                             f"hybrid {h['rank']}, keyword {k['rank']}")  # fmt: skip
    out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps({"runs": loaded}, indent=1) + "\n", "utf-8")
    print("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("--tag", required=True)
    one.add_argument("--output", required=True)
    both = sub.add_parser("report")
    both.add_argument("runs", nargs="+")
    both.add_argument("--output", default=str(ROOT / "benchmarks" / "identifiers"))
    args = parser.parse_args()
    if args.command == "run":
        run(args.tag, Path(args.output))
    else:
        report([Path(r) for r in args.runs], Path(args.output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
