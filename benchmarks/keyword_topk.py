"""Keyword search with the top k taken inside FTS5 vs joined first: same rows, time ratio.

Builds (or reuses) a synthetic knowledge base of N windows from SciFact's vocabulary
(evaluation/synthetic.py, as `citewise bench latency` does), then runs SciFact's queries
through the SQLite store's keyword search and through the previous SQL (every matching row
joined to its chunk before the limit), interleaved, in one process. Reports p50/p95 of each,
their ratio, and whether the two return the same rows in the same order.

    python benchmarks/keyword_topk.py ../shared/data/scifact --size 100000 \
        --work /tmp/citewise-topk --output benchmarks/keyword-topk.md
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from citewise.evaluation.synthetic import KB_NAME, build_synthetic
from citewise.store import SQLiteStore
from citewise.store.sqlite_keyword import _words_sql
from citewise.store.sqlite_schema import C_CHUNK_COLUMNS

K = 20  # candidates per ranker, as hybrid search asks


def joined_first(store: SQLiteStore, text: str, k: int) -> list[tuple[float, str]]:
    """The previous form: every match joined to its chunk, then ordered and limited."""
    table, match = _words_sql(text)
    with store._read(KB_NAME) as conn:
        rows = conn.execute(
            f"SELECT -bm25({table}) AS score, {C_CHUNK_COLUMNS} "
            f"FROM {table} JOIN chunks c ON c.rid = {table}.rowid "
            f"WHERE {table} MATCH ? ORDER BY bm25({table}), {table}.rowid LIMIT ?",
            (match, k),
        ).fetchall()
    return [(row["score"], row["chunk_id"]) for row in rows]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="SciFact BEIR folder")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--work", type=Path, default=Path("/tmp/citewise-topk"))
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()

    synthetic = build_synthetic(args.work, args.size, args.dataset / "corpus.jsonl")
    queries = [
        json.loads(line)["text"]
        for line in (args.dataset / "queries.jsonl").read_text().splitlines()[: args.queries]
    ]
    store = SQLiteStore(synthetic.root, ann_threshold=0)
    kb = store.open(KB_NAME)
    new_ms: list[float] = []
    old_ms: list[float] = []
    same = 0
    for query in queries:  # warm the page cache for both forms
        kb.keyword(query, K)
        joined_first(store, query, K)
    for query in queries:
        t0 = time.perf_counter()
        hits = kb.keyword(query, K)
        t1 = time.perf_counter()
        old = joined_first(store, query, K)
        t2 = time.perf_counter()
        new_ms.append((t1 - t0) * 1000)
        old_ms.append((t2 - t1) * 1000)
        same += [c.chunk_id for c, _ in hits] == [cid for _, cid in old]
    store.close()
    p50_new, p50_old = statistics.median(new_ms), statistics.median(old_ms)
    lines = [
        f"# Keyword search: top k inside FTS5 vs joined first ({args.size:,} windows)",
        "",
        f"`python benchmarks/keyword_topk.py {args.dataset} --size {args.size}` — "
        f"{len(queries)} SciFact queries, k = {K}, interleaved in one process.",
        "",
        "| form | p50 ms | p95 ms |",
        "| --- | ---: | ---: |",
        f"| joined first (before) | {p50_old:.2f} | {percentile(old_ms, 0.95):.2f} |",
        f"| top k inside FTS5 (now) | {p50_new:.2f} | {percentile(new_ms, 0.95):.2f} |",
        "",
        f"p50 ratio now / before: **{p50_new / p50_old:.2f}×**; same rows in the same order: "
        f"{same} of {len(queries)} queries.",
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.output:
        args.output.write_text(report)


if __name__ == "__main__":
    main()
