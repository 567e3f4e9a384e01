"""Section- and page-level retrieval figures (MRR@10, R@3, R@10, nDCG@10) of question sets.

Runs with whichever citewise is importable, so one invocation per code version gives a
same-run comparison (main's sources on PYTHONPATH, then this branch's):

    CITEWISE_HOME=/work/cw-home PYTHONPATH=/tmp/cw-main/src python benchmarks/retrieval_unseen.py \
        run --label main --out /tmp/main.json SET=CASES=KB ...
    python benchmarks/retrieval_unseen.py report main.json fusion.json \
        --out benchmarks/retrieval-unseen

``sweep`` runs the hybrid search once per (API_WEIGHT, NAME_WEIGHT, PROXIMITY_WEIGHT) on the
given sets.
A part is found at the rank of the first hit on one of its anchors (``page/#anchor``; the
section level) or on one of its pages (the page level); relevance is binary and a part has
one relevant target, so nDCG@10 is 1/log2(1 + rank).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

K = 10


def _target(hit: Any) -> str:
    chunk = hit.chunk
    return f"{chunk.page}#{chunk.anchor}" if chunk.anchor else chunk.page


def _rank(hits: list[Any], wanted: set[str], level: str) -> int | None:
    for rank, hit in enumerate(hits[:K], start=1):
        if (level == "page" and hit.chunk.page in wanted) or (
            level == "section" and _target(hit) in wanted
        ):
            return rank
    return None


def _figures(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "parts": len(ranks),
        "mrr": round(sum(1 / r for r in ranks if r) / n, 4),
        "r@1": round(sum(1 for r in ranks if r and r <= 1) / n, 4),
        "r@3": round(sum(1 for r in ranks if r and r <= 3) / n, 4),
        "r@10": round(sum(1 for r in ranks if r) / n, 4),
        "ndcg@10": round(sum(1 / math.log2(1 + r) for r in ranks if r) / n, 4),
    }


def run_set(kb: Any, cases_path: Path, split: str | None = None) -> dict[str, Any]:
    raw = json.loads(cases_path.read_text(encoding="utf-8"))
    levels: dict[str, list[int | None]] = {"page": [], "section": []}
    duplicates = 0
    queries = 0
    rows = []
    for case in raw:
        if not case.get("parts") or (split is not None and case.get("split") != split):
            continue
        question = [m for m in case["messages"] if m["role"] == "user"][-1]["content"]
        settings = {k: v for k, v in (case.get("settings") or {}).items() if k == "scope"}
        hits = kb.search(question, settings, top_k=K)
        queries += 1
        keys = [(h.chunk.doc_id, h.chunk.section_index) for h in hits]
        duplicates += len(keys) - len(set(keys))
        anchors = case.get("anchors")
        for i, part in enumerate(case["parts"]):
            page_rank = _rank(hits, set(part), "page")
            levels["page"].append(page_rank)
            section_rank = None
            if anchors:
                section_rank = _rank(hits, set(anchors[i]), "section")
                levels["section"].append(section_rank)
            rows.append(
                {"id": case["id"], "part": i, "page_rank": page_rank, "section_rank": section_rank,
                 "top": [_target(h) for h in hits[:3]]}
            )  # fmt: skip
    return {
        "page": _figures(levels["page"]),
        "section": _figures(levels["section"]) if levels["section"] else None,
        "queries": queries,
        "duplicate_sections_in_top10": duplicates,
        "rows": rows,
    }


def _kb(name: str) -> Any:
    from citewise.kb import KnowledgeBase

    return KnowledgeBase(name)


def _sets(specs: list[str]) -> list[tuple[str, Path, str, str | None]]:
    """``NAME=CASES=KB`` or ``NAME=CASES=KB=SPLIT`` (only the cases of that split)."""
    out = []
    for spec in specs:
        name, cases, kb, *split = spec.split("=")
        out.append((name, Path(cases), kb, split[0] if split else None))
    return out


def cmd_run(args: argparse.Namespace) -> None:
    result: dict[str, Any] = {"label": args.label, "sets": {}}
    for name, cases, kb, split in _sets(args.sets):
        started = time.perf_counter()
        result["sets"][name] = run_set(_kb(kb), cases, split)
        result["sets"][name]["seconds"] = round(time.perf_counter() - started, 2)
        print(name, result["sets"][name]["page"], result["sets"][name]["section"], file=sys.stderr)
    Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")


def cmd_sweep(args: argparse.Namespace) -> None:
    import itertools

    from citewise.retrieval import hybrid

    table = []
    grid = itertools.product(
        *([float(w) for w in ws.split(",")] for ws in
          (args.api_weights, args.name_weights, args.proximity_weights))
    )  # fmt: skip
    for api_weight, name_weight, proximity_weight in grid:
        if True:
            hybrid.API_WEIGHT, hybrid.NAME_WEIGHT = api_weight, name_weight
            hybrid.PROXIMITY_WEIGHT = proximity_weight
            row: dict[str, Any] = {
                "api_weight": api_weight, "name_weight": name_weight,
                "proximity_weight": proximity_weight,
            }  # fmt: skip
            for name, cases, kb, split in _sets(args.sets):
                got = run_set(_kb(kb), cases, split)
                level = got["section"] or got["page"]
                row[name] = {"mrr": level["mrr"], "r@3": level["r@3"], "r@10": level["r@10"]}
            row["mean_mrr"] = round(
                sum(v["mrr"] for k, v in row.items() if isinstance(v, dict)) / len(args.sets), 4
            )
            print(json.dumps(row), file=sys.stderr)
            table.append(row)
    Path(args.out).write_text(json.dumps(table, indent=1), encoding="utf-8")


def _cell(figures: dict[str, float] | None) -> str:
    if not figures:
        return "–"
    return " / ".join(f"{figures[m]:.3f}" for m in ("mrr", "r@3", "r@10", "ndcg@10"))


def cmd_report(args: argparse.Namespace) -> None:
    runs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args.runs]
    labels = [run["label"] for run in runs]
    lines = [
        "| set | level | parts | "
        + " | ".join(f"{label}: MRR / R@3 / R@10 / nDCG@10" for label in labels)
        + " | dup. sections in top 10 (" + ", ".join(labels) + ") |",
        "| --- | --- | ---: | " + " | ".join("---" for _ in labels) + " | --- |",
    ]  # fmt: skip
    for name in runs[0]["sets"]:
        for level in ("section", "page"):
            cells = [run["sets"][name][level] for run in runs]
            if cells[0] is None:
                continue
            dups = ", ".join(str(run["sets"][name]["duplicate_sections_in_top10"]) for run in runs)
            lines.append(
                f"| {name} | {level} | {cells[0]['parts']} | "
                + " | ".join(_cell(c) for c in cells)
                + f" | {dups} |"
            )
    Path(args.out + ".md.table").write_text("\n".join(lines) + "\n", encoding="utf-8")
    Path(args.out + ".json").write_text(
        json.dumps({run["label"]: run for run in runs}, indent=1), encoding="utf-8"
    )
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--label", required=True)
    run.add_argument("--out", required=True)
    run.add_argument("sets", nargs="+", help="NAME=CASES.json=KB")
    sweep = sub.add_parser("sweep")
    sweep.add_argument("--api-weights", default="1.0,0.8,0.6,0.4")
    sweep.add_argument("--name-weights", default="0,1,2,4")
    sweep.add_argument("--proximity-weights", default="0,0.5,1,2")
    sweep.add_argument("--out", required=True)
    sweep.add_argument("sets", nargs="+")
    report = sub.add_parser("report")
    report.add_argument("runs", nargs="+")
    report.add_argument("--out", required=True)
    args = parser.parse_args()
    {"run": cmd_run, "sweep": cmd_sweep, "report": cmd_report}[args.command](args)


if __name__ == "__main__":
    main()
