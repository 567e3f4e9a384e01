"""Where hybrid's dense-stage tail at 1M comes from: two passes of the same 300 texts.

A fresh process opens a synthetic knowledge base built by keyword_impact.py (its impact
matrix and ANN index saved beside it), warms with 50 other SciFact texts, then searches the
300 texts twice with hybrid ``KnowledgeBase.search`` (the query LRU emptied before each pass,
so both passes embed every query): the second pass runs on the pages the first one read.
Prints p50/p95 per pass and which queries' dense stage took over 60 ms.

    CITEWISE_HOME=/tmp/home nice -n 10 python benchmarks/scale_sqlite_tail.py \\
        ../shared/data/scifact /work/scratch/scale30/kb/synthetic-1000000
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

# A sibling script (run as ``python benchmarks/scale_sqlite_tail.py``): its stage collector.
from keyword_impact import SearchStages

from citewise import telemetry
from citewise.config import Settings
from citewise.embedding.query_lru import QUERY_EMBEDDINGS
from citewise.evaluation.synthetic import KB_NAME
from citewise.kb import KnowledgeBase, Library


def p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="SciFact BEIR folder (the query texts)")
    parser.add_argument("root", type=Path, help="the synthetic knowledge base's folder")
    args = parser.parse_args()
    lines = (args.dataset / "queries.jsonl").read_text().splitlines()
    queries = [json.loads(line)["text"] for line in lines[:300]]
    warm = [json.loads(line)["text"] for line in lines[300:350]]
    library = Library(Settings.from_env().with_overrides(store_url=f"sqlite:///{args.root}"))
    try:
        kb = KnowledgeBase(KB_NAME, library=library, embedder=library.embedder("minilm"))
        started = time.perf_counter()
        for text in warm:
            kb.search(text, top_k=10, search_type="hybrid")
        print(f"warm-up, 50 searches: {time.perf_counter() - started:.2f} s")
        for run in range(2):
            QUERY_EMBEDDINGS.clear()
            stages = SearchStages()
            with telemetry.listening(stages):
                for text in queries:
                    kb.search(text, top_k=10, search_type="hybrid")
            dense = [r["dense"] * 1000 for r in stages.searches]
            search = [r["search"] * 1000 for r in stages.searches]
            slow = [i for i, ms in enumerate(dense) if ms > 60]
            print(
                f"pass {run}: search p50 {statistics.median(search):.1f} p95 {p95(search):.1f} "
                f"ms; dense p50 {statistics.median(dense):.1f} p95 {p95(dense):.1f} ms; "
                f"dense over 60 ms: {len(slow)} queries, first ones #{slow[:40]}"
            )
    finally:
        library.close()


if __name__ == "__main__":
    main()
