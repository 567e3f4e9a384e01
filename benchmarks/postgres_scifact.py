"""SciFact's own MiniLM window vectors in the PostgreSQL store: HNSW recall@10 against exact.

Usage (a cluster as for ``postgres_1m.py``; a warm embedding cache under CITEWISE_HOME saves
the ~25 CPU-minutes of embedding SciFact)::

    CITEWISE_HOME=DIR python benchmarks/postgres_scifact.py URL ../shared/data/scifact \\
        [--ef 40,100,400] [--output benchmarks/postgres-scifact.json]

SciFact is indexed through ``KnowledgeBase.add_sections`` (``citewise bench beir``'s own
ingest) into a PostgreSQL knowledge base (schema ``bench_scifact``, kept for the next run)
whose threshold keeps it exact. Each test query's dense top 10 (chunks, each scored by its best
window) is read exact, then the HNSW index is built (the store's own build) and the same read
at each ef_search; recall@10 is the overlap. nDCG@10 of the vector and hybrid modes
(``KnowledgeBase.search``, top 100, as ``bench beir``) is measured both ways too.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from citewise.config import Settings
from citewise.evaluation.beir import (
    BENCH_KB,
    _dedupe,
    _index,
    _percentiles,
    load_beir,
    subsample_corpus,
)
from citewise.evaluation.metrics import evaluate
from citewise.kb import KnowledgeBase, Library
from citewise.store import open_store


def _with(url: str, **options: object) -> str:
    return f"{url}{'&' if '?' in url else '?'}{urlencode({k: str(v) for k, v in options.items()})}"


def _modes(kb: KnowledgeBase, queries: dict[str, str], qrels: Any) -> dict[str, Any]:
    out = {}
    for mode, search_type in (("vector", "vector"), ("hybrid", "hybrid")):
        run, lat = {}, []
        for qid, text in queries.items():
            started = time.perf_counter()
            hits = kb.search(text, top_k=100, search_type=search_type)
            lat.append(time.perf_counter() - started)
            run[qid] = _dedupe([h.chunk.doc_id for h in hits])
        figures = evaluate(run, qrels)
        out[mode] = {"ndcg@10": round(figures["ndcg@10"], 4), **_percentiles(lat)}
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    corpus, queries, qrels = load_beir(args.folder, "test")
    if args.max_queries:  # a quick check of the script, not a figure
        queries = dict(list(queries.items())[: args.max_queries])
        qrels = {q: qrels[q] for q in queries}
        corpus = subsample_corpus(corpus, qrels, args.max_queries * 10)
    base = _with(args.url, schema=args.schema, build_memory=args.build_memory,
                 build_workers=args.build_workers)  # fmt: skip
    settings = Settings.from_env()
    exact_url = _with(base, hnsw_threshold=10**9)

    def library(url: str) -> tuple[Library, KnowledgeBase]:
        lib = Library(settings.with_overrides(store_url=url))
        kb = KnowledgeBase(BENCH_KB, library=lib, embedder=lib.embedder("minilm"))
        return lib, kb

    out: dict[str, Any] = {"documents": len(corpus), "queries": len(queries)}
    lib, kb = library(exact_url)
    try:
        if not kb.exists or kb.meta().get("bench_done") != "1":
            if kb.exists:
                kb.drop()
            out["index"] = _index(kb, corpus, None)
            kb.store.apply(meta={"bench_done": "1"})
        vectors = {qid: kb.embedder.embed_query(text) for qid, text in queries.items()}
        handle = kb.store
        exact = {qid: [c.chunk_id for c, _ in handle.dense(v, 10)] for qid, v in vectors.items()}
        out["exact"] = _modes(kb, queries, qrels) if args.ndcg else {}
        print("exact", out["exact"], flush=True)
    finally:
        lib.close()
    store = open_store(_with(base, hnsw_threshold=1), home=Path("."))
    try:
        started = time.perf_counter()
        store.open(BENCH_KB).apply()  # crossing the threshold builds (no-op if built)
        out["hnsw_build_seconds"] = round(time.perf_counter() - started, 1)
    finally:
        store.close()
    out["hnsw"] = {}
    for ef in args.ef:
        lib, kb = library(_with(base, hnsw_threshold=1, ef_search=ef))
        try:
            handle = kb.store
            hits, lat = 0, []
            for qid, v in vectors.items():
                started = time.perf_counter()
                got = handle.dense(v, 10)
                lat.append(time.perf_counter() - started)
                hits += len({c.chunk_id for c, _ in got} & set(exact[qid]))
            want = sum(len(e) for e in exact.values())
            row: dict[str, Any] = {"recall@10": round(hits / want, 4), "dense": _percentiles(lat)}
            if args.ndcg:
                row |= _modes(kb, queries, qrels)
            out["hnsw"][f"ef_search={ef}"] = row
            print(ef, row, flush=True)
        finally:
            lib.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--ef", type=lambda s: [int(x) for x in s.split(",")], default=[40, 100])
    parser.add_argument("--build-memory", default="1GB")
    parser.add_argument("--build-workers", type=int, default=1)
    parser.add_argument("--schema", default="bench_scifact")
    parser.add_argument("--max-queries", type=int, help="a subset (a quick check)")
    parser.add_argument("--no-ndcg", dest="ndcg", action="store_false")
    parser.add_argument("--output", type=Path, default=Path("benchmarks/postgres-scifact.json"))
    args = parser.parse_args()
    result = run(args)
    args.output.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
