"""Keyword search through the impact matrix vs FTS5's bm25() vs bm25s: same rows, time, memory.

For each size, builds (or reuses) a synthetic knowledge base of N windows from SciFact's
vocabulary (evaluation/synthetic.py, as `citewise bench latency` does), then runs SciFact's
queries, interleaved in one process, through: FTS5 alone (main's SQL: ``keyword_rows``
without the matrix), the store's keyword search (the impact matrix, store/sqlite_impact.py)
and bm25s (Snowball-stemmed, English stop words) over the same texts. Reports p50/p95, how
many queries return the same rows with bit-equal scores, the matrix's build time and size.

    python benchmarks/keyword_impact.py ../shared/data/scifact --sizes 5183 100000 \
        --work /tmp/citewise-impact --output benchmarks/keyword-impact
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from citewise.evaluation.synthetic import KB_NAME, build_synthetic
from citewise.store import SQLiteStore
from citewise.store.sqlite_impact import build, tokens
from citewise.store.sqlite_keyword import keyword_rows
from citewise.store.text import query_terms

K = 20  # candidates per ranker, as hybrid search asks


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def stats(ms: list[float]) -> dict[str, float]:
    return {"p50": statistics.median(ms), "p95": percentile(ms, 0.95)}


def bm25s_search(texts: list[str], queries: list[str]) -> tuple[list[float], float]:
    import bm25s
    import snowballstemmer

    stemmer = snowballstemmer.stemmer("english")
    t0 = time.perf_counter()
    retriever = bm25s.BM25()
    corpus = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever.index(corpus, show_progress=False)
    built = time.perf_counter() - t0
    ms = []
    for q in queries:
        t = time.perf_counter()
        tokens = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
        if tokens.vocab:
            retriever.retrieve(tokens, k=min(K, len(texts)), show_progress=False)
        ms.append((time.perf_counter() - t) * 1000)
    return ms, built


def run(dataset: Path, size: int, work: Path, queries: list[str]) -> dict[str, Any]:
    synthetic = build_synthetic(work, size, dataset / "corpus.jsonl")
    store = SQLiteStore(synthetic.root, ann_threshold=0, impacts_in_background=False)
    kb = store.open(KB_NAME)
    with store._read(KB_NAME) as conn:
        t0 = time.perf_counter()
        index = build(conn, "bench")
        build_s = time.perf_counter() - t0
        texts = [r[0] for r in conn.execute("SELECT text FROM chunks ORDER BY rid")]
    matrix_mb = (
        index.indptr.nbytes + index.positions.nbytes + index.impacts.nbytes + index.rids.nbytes
    ) / 2**20
    fts_ms: list[float] = []
    impact_ms: list[float] = []
    ids_ms: list[float] = []  # the matrix alone: tokens and top k, no chunk read (as bm25s)
    same = 0
    kb.keyword(queries[0], K)  # the store builds its matrix on first use
    for query in queries:  # warm the page cache for both forms
        kb.keyword(query, K)
        with store._read(KB_NAME) as conn:
            keyword_rows(conn, query, K, None)
    for query in queries:
        t0 = time.perf_counter()
        hits = kb.keyword(query, K)
        t1 = time.perf_counter()
        with store._read(KB_NAME) as conn:
            rows = keyword_rows(conn, query, K, None)
        t2 = time.perf_counter()
        index.top([t[0] for t in tokens(query_terms(query)) if len(t) == 1], K)
        t3 = time.perf_counter()
        ids_ms.append((t3 - t2) * 1000)
        impact_ms.append((t1 - t0) * 1000)
        fts_ms.append((t2 - t1) * 1000)
        same += [(c.chunk_id, s) for c, s in hits] == [(r["chunk_id"], r["score"]) for r in rows]
    store.close()
    bm25s_ms, bm25s_build = bm25s_search(texts, queries)
    return {
        "windows": size,
        "queries": len(queries),
        "fts5": stats(fts_ms),
        "impact": stats(impact_ms),
        "impact_ids_only": stats(ids_ms),
        "bm25s": stats(bm25s_ms),
        "identical": same,
        "impact_build_s": build_s,
        "impact_mb": matrix_mb,
        "postings": len(index.impacts),
        "terms": len(index.terms),
        "bm25s_build_s": bm25s_build,
    }


def report(results: list[dict[str, Any]], argv: str) -> str:
    lines = [
        "# Keyword search: FTS5's BM25 precomputed (impact matrix) vs FTS5 vs bm25s",
        "",
        f"`{argv}` — SciFact queries, k = {K}, interleaved in one process; FTS5 is main's "
        "SQL (top k inside FTS5), the matrix is store/sqlite_impact.py, bm25s is stemmed.",
        "",
        "Both store columns return chunks (rows read from SQLite); *ids only* is the matrix "
        "alone (tokenize + top k, ids and scores), which is what bm25s returns.",
        "",
        "| windows | FTS5 p50 / p95 ms | matrix p50 / p95 ms | ids only p50 / p95 ms "
        "| bm25s p50 / p95 ms | matrix / FTS5 p50 | matrix / bm25s p50 "
        "| ids only / bm25s p50 | identical rows+scores "
        "| matrix build s | matrix MB |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        f, m, i, b = r["fts5"], r["impact"], r["impact_ids_only"], r["bm25s"]
        lines.append(
            f"| {r['windows']:,} | {f['p50']:.2f} / {f['p95']:.2f} | {m['p50']:.2f} / "
            f"{m['p95']:.2f} | {i['p50']:.2f} / {i['p95']:.2f} | {b['p50']:.2f} / "
            f"{b['p95']:.2f} | {m['p50'] / f['p50']:.2f}× | {m['p50'] / b['p50']:.2f}× "
            f"| {i['p50'] / b['p50']:.2f}× | {r['identical']} of {r['queries']} "
            f"| {r['impact_build_s']:.1f} | {r['impact_mb']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="SciFact BEIR folder")
    parser.add_argument("--sizes", type=int, nargs="+", default=[5183, 100_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--work", type=Path, default=Path("/tmp/citewise-impact"))
    parser.add_argument("--output", type=Path, help="path stem for .md and .json")
    args = parser.parse_args()
    queries = [
        json.loads(line)["text"]
        for line in (args.dataset / "queries.jsonl").read_text().splitlines()[: args.queries]
    ]
    results = [run(args.dataset, n, args.work, queries) for n in args.sizes]
    argv = f"python benchmarks/keyword_impact.py DATASET --sizes {' '.join(map(str, args.sizes))}"
    text = report(results, argv)
    print(text)
    if args.output:
        args.output.with_suffix(".md").write_text(text)
        args.output.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
