"""Issue 34's retrieval measurements: candidates per ranker, and how multi-query results merge.

Needs an indexed ``lgos`` knowledge base (``citewise index`` of the LGOS 0.12.0 docs) under
``CITEWISE_HOME``; loads no chat model:

    CITEWISE_HOME=… python benchmarks/retrieval_parity.py --kb lgos \\
        --out benchmarks/retrieval-parity.json

``candidates``: the 56 LGOS cases' last messages searched (hybrid, top 10) with each
``candidates_per_ranker``; part recall@k and MRR at section level (``first_answering_rank``).
``merge``: every phrasing set of two or more queries (the planner queries of the two
real-model runs in ``benchmarks/real-model/``, and each multi-turn LGOS case's user messages)
merged four ways: each query's top 10 interleaved by rank (the workflow's merge before) or
fused by relative-score RRF (``fuse_queries``, the workflow's merge now); and
``search_many`` (``query_rewrite``'s path, 20 candidates per phrasing) by plain rank RRF or
by relative-score RRF (``by_score``, the default now).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from citewise.evaluation.cases import Case, load_cases
from citewise.evaluation.retrieval import first_answering_rank, recall_and_mrr
from citewise.kb import KnowledgeBase
from citewise.retrieval.hybrid import fuse_queries, search_many

ROOT = Path(__file__).resolve().parent.parent
LGOS = ROOT / "tests/data/lgos-cases.json"
DEV = ROOT / "benchmarks/real-model/qwen2.5-coder-1.5b-instruct-lgos-dev/cases/lgos-dev-cases.json"
RUNS = ("qwen2.5-coder-0.5b-lgos-dev", "qwen2.5-coder-1.5b-instruct-lgos-dev")
SWEEP = (10, 15, 20, 30, 40)
K = 10


def _figures(ranks: list[int | None]) -> dict[str, float]:
    return {name: round(value, 3) for name, value in recall_and_mrr(ranks).items()}


def candidates(kb: KnowledgeBase, cases: list[Case]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in SWEEP:
        ranks: list[int | None] = []
        for case in cases:
            if not case.parts:
                continue
            hits = kb.search(
                case.question, top_k=K, search_type="hybrid", candidates_per_ranker=n,
                scope=case.scope,
            )  # fmt: skip
            ranks.extend(first_answering_rank(hits, part) for part in case.targets)
        out[str(n)] = _figures(ranks)
    return out


def phrasing_sets(lgos: list[Case], dev: list[Case]) -> list[tuple[str, Case, list[str]]]:
    sets: list[tuple[str, Case, list[str]]] = []
    by_id = {case.id: case for case in dev}
    for run in RUNS:
        results = json.loads((ROOT / "benchmarks/real-model" / run / "results.json").read_text())
        for item in results["cases"]:
            case = by_id.get(item["case"])
            for queries in item.get("queries") or []:
                distinct = list(dict.fromkeys(q for q in queries if q.strip()))
                if case is not None and case.parts and len(distinct) > 1:
                    sets.append((f"{run}:{case.id}", case, distinct))
    for case in lgos:
        users = [m["content"] for m in case.messages if m["role"] == "user"]
        if case.parts and len(users) > 1:
            sets.append((f"multi-turn:{case.id}", case, users))
    return sets


def _interleave(rankings: list[list[Any]]) -> list[Any]:
    """The workflow's merge before issue 34: rank by rank, repeated chunks dropped."""
    merged: list[Any] = []
    seen: set[str] = set()
    for rank in range(max((len(hits) for hits in rankings), default=0)):
        for hits in rankings:
            if rank < len(hits) and hits[rank].chunk.chunk_id not in seen:
                seen.add(hits[rank].chunk.chunk_id)
                merged.append(hits[rank])
    return merged


def merge(kb: KnowledgeBase, sets: list[tuple[str, Case, list[str]]]) -> dict[str, Any]:
    store, embedder = kb.store, kb.embedder
    ranks: dict[str, list[int | None]] = {
        "interleave": [],
        "rank_rrf": [],
        "score_rrf": [],
        "workflow_score_rrf": [],
    }
    detail = []
    for name, case, queries in sets:
        scope = {"scope": case.scope} if case.scope else {}
        filter_ = kb.resolve(None, **scope).search_filter()
        each = [kb.search(q, top_k=K, **scope) for q in queries]
        merged = {
            "interleave": _interleave(each),
            "workflow_score_rrf": fuse_queries(each),
            "rank_rrf": search_many(store, embedder, queries, k=K, filter=filter_, by_score=False),
            "score_rrf": search_many(store, embedder, queries, k=K, filter=filter_),
        }
        row: dict[str, Any] = {"set": name, "queries": queries}
        for method, hits in merged.items():
            found = [first_answering_rank(hits[:K], part) for part in case.targets]
            ranks[method].extend(found)
            row[method] = found
        detail.append(row)
    return {
        "sets": len(sets),
        "figures": {method: _figures(found) for method, found in ranks.items()},
        "detail": detail,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", default="lgos")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    kb = KnowledgeBase(args.kb)
    lgos = load_cases(LGOS)
    report = {
        "candidates_per_ranker": candidates(kb, lgos),
        "merge": merge(kb, phrasing_sets(lgos, load_cases(DEV))),
    }
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(json.dumps({k: v for k, v in report["merge"].items() if k != "detail"}, indent=1))
    print(json.dumps(report["candidates_per_ranker"], indent=1))


if __name__ == "__main__":
    main()
