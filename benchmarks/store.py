"""`python -m benchmarks.store`: the SQLite and PostgreSQL stores side by side, then PostgreSQL
at scale.

Two parts. SciFact through the service layer on each store (nDCG@10 per search type, query
p50/p95, ingest time with a warm embedding cache so the stores, not the embedder, are timed);
and a synthetic knowledge base of N chunks (random unit vectors, generated text) straight
through the store API: ingest rate, dense query latency for exact search and for HNSW, HNSW's
recall@10 against exact, and BM25 latency, beside SQLite's exact search on the same data.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import numpy as np

from benchmarks import common
from citewise.config import Settings
from citewise.evaluation.beir import MODES, _dedupe, _index, _percentiles, _timed_run, load_beir
from citewise.evaluation.metrics import Qrels, Run, evaluate
from citewise.kb import KnowledgeBase, Library, Progress
from citewise.models import Chunk, Document
from citewise.store import DocumentUpdate, KBStore, Store, open_store

__all__ = ["format_report", "main", "run_store_benchmark"]

BENCH_KB = "bench"
DIM = 384
BATCH = 2000
QUERIES = 100
WORDS = 5000


def _scifact(
    folder: Path, settings: Settings, urls: dict[str, str], progress: Progress | None
) -> dict[str, Any]:
    corpus, queries, qrels = load_beir(folder, "test")
    out: dict[str, Any] = {"documents": len(corpus), "queries": len(queries), "stores": {}}
    for name, url in urls.items():
        library = Library(settings.with_overrides(store_url=url))
        try:
            if BENCH_KB in library.names():
                library.drop(BENCH_KB)
            kb = KnowledgeBase(BENCH_KB, library=library, embedder=library.embedder("minilm"))
            index = _index(kb, corpus, progress)
            index["chunks_per_second"] = round(index["chunks"] / index["index_seconds"], 1)
            modes: dict[str, Any] = {}
            runs = {}
            for mode, search_type in MODES.items():
                runs[mode], modes[mode] = _measure(kb, search_type, queries, qrels)
            if name == "postgresql":
                # The same knowledge base again once it has its HNSW index (real embeddings).
                started = time.perf_counter()
                _build_hnsw(url, BENCH_KB)
                build = round(time.perf_counter() - started, 1)
                approx, modes["vector_hnsw"] = _measure(kb, "vector", queries, qrels)
                modes["vector_hnsw"]["build_seconds"] = build
                modes["vector_hnsw"]["overlap@10_with_exact"] = _recall(
                    [r[:10] for r in approx.values()], [runs["vector"][q][:10] for q in approx]
                )
            out["stores"][name] = {"index": index, "modes": modes}
            library.drop(BENCH_KB)
        finally:
            library.close()
    sqlite, pg = out["stores"]["sqlite"], out["stores"]["postgresql"]
    out["postgresql_vs_sqlite"] = {
        **{
            f"{mode}_ndcg_delta": round(pg["modes"][mode]["ndcg@10"] - f["ndcg@10"], 4)
            for mode, f in sqlite["modes"].items()
        },
        **{
            f"{mode}_p50_ratio": round(pg["modes"][mode]["p50_ms"] / f["p50_ms"], 2)
            for mode, f in sqlite["modes"].items()
        },
        "ingest_time_ratio": round(
            pg["index"]["index_seconds"] / sqlite["index"]["index_seconds"], 2
        ),
    }
    return out


def _measure(
    kb: KnowledgeBase, search_type: str, queries: dict[str, str], qrels: Qrels
) -> tuple[Run, dict[str, Any]]:
    def rank(text: str) -> list[str]:
        hits = kb.search(text, top_k=100, search_type=search_type)
        return _dedupe([hit.chunk.doc_id for hit in hits])

    run, latencies = _timed_run(queries, rank)
    return run, {**evaluate(run, qrels), **_percentiles(latencies)}


def _with(url: str, **options: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{urlencode(options)}"


def _build_hnsw(url: str, kb: str) -> None:
    """Build ``kb``'s HNSW index now: a write through a store whose threshold is 1."""
    indexer = open_store(_with(url, hnsw_threshold="1"), home=Path("."))
    try:
        indexer.open(kb).apply()
    finally:
        indexer.close()


def _synthetic(n: int, rng: np.random.Generator) -> tuple[list[DocumentUpdate], np.ndarray]:
    """n chunks, 10 per document, 20-40 Zipf-distributed words and one unit vector each.

    Vectors come in clusters of about 20 (as embeddings of related passages do), so a
    query's ten nearest are meaningful: with uniform random vectors they would be nearly
    tied with everything else, which no approximate index (and no real corpus) looks like.
    """
    vocab = [f"w{i}" for i in range(WORDS)]
    ranks = np.minimum(rng.zipf(1.3, size=n * 40), WORDS) - 1
    centers = _unit(rng.standard_normal((max(1, n // 20), DIM)))
    noise = rng.standard_normal((n, DIM)) * (0.6 / np.sqrt(DIM))
    vectors = _unit(centers[rng.integers(0, len(centers), size=n)] + noise)
    updates = []
    for d in range(0, n, 10):
        doc = f"d{d // 10}"
        chunks = []
        for i in range(d, min(d + 10, n)):
            length = 20 + i % 21
            text = " ".join(vocab[r] for r in ranks[i * 40 : i * 40 + length])
            chunks.append(Chunk(f"{doc}-{i}", doc, i - d, 0, text, doc, (doc,), "", "", "",
                                f"s{d % 7}", None))  # fmt: skip
        document = Document(doc, doc, "", "", doc, f"s{d % 7}")
        ids = range(d, d + len(chunks))
        updates.append(
            DocumentUpdate(
                document, chunks, {c.chunk_id: vectors[i] for c, i in zip(chunks, ids, strict=True)}
            )
        )
    return updates, vectors


def _unit(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return out


def _timed(
    queries: np.ndarray, search: Callable[[np.ndarray], list[str]]
) -> tuple[list[list[str]], dict[str, float]]:
    results, latencies = [], []
    for q in queries:
        started = time.perf_counter()
        results.append(search(q))
        latencies.append(time.perf_counter() - started)
    return results, _percentiles(latencies)


def _recall(found: Sequence[Sequence[str]], truth: Sequence[Sequence[str]]) -> float:
    hits = sum(len(set(f) & set(t)) for f, t in zip(found, truth, strict=True))
    return round(hits / sum(len(t) for t in truth), 4)


def _load(store: Store, updates: list[DocumentUpdate]) -> tuple[KBStore, float]:
    if store.exists(BENCH_KB):
        store.drop(BENCH_KB)
    kb = store.create(BENCH_KB)
    started = time.perf_counter()
    per = max(1, BATCH // 10)
    for i in range(0, len(updates), per):
        kb.apply(updates[i : i + per])
    return kb, time.perf_counter() - started


def _scale(n: int, pg_url: str, ef_search: int, progress: Progress | None) -> dict[str, Any]:
    rng = np.random.default_rng(n)
    updates, vectors = _synthetic(n, rng)
    # Queries near stored chunks (as real questions are near their answers).
    picks = rng.choice(n, size=QUERIES, replace=False)
    queries = _unit(vectors[picks] + rng.standard_normal((QUERIES, DIM)) * (0.3 / np.sqrt(DIM)))
    texts = [" ".join(u.chunks[0].text.split()[:3]) for u in updates[:QUERIES]]
    out: dict[str, Any] = {"chunks": n}

    def ids(kb: KBStore) -> Callable[[np.ndarray], list[str]]:
        return lambda q: [c.chunk_id for c, _ in kb.dense(q, 10)]

    with tempfile.TemporaryDirectory(prefix="citewise-store-bench-") as tmp:
        sqlite = open_store(f"sqlite:///{tmp}", home=Path(tmp))
        try:
            kb, seconds = _load(sqlite, updates)
            out["sqlite"] = {"ingest_chunks_per_second": round(n / seconds, 1)}
            kb.dense(queries[0], 10)  # the first search loads the matrix
            truth, out["sqlite"]["exact"] = _timed(queries, ids(kb))
            _, out["sqlite"]["keyword"] = _timed_texts(texts, kb)
        finally:
            sqlite.close()
    if progress:
        progress(n, n, "chunks in SQLite")
    url = _with(pg_url, hnsw_threshold=str(10 * n + 1))
    store = open_store(url, home=Path("."))
    pg: dict[str, Any] = {}
    out["postgresql"] = pg
    try:
        kb, seconds = _load(store, updates)
        pg["ingest_chunks_per_second"] = round(n / seconds, 1)
        exact, pg["exact"] = _timed(queries, ids(kb))
        pg["exact_recall@10"] = _recall(exact, truth)
        _, pg["keyword"] = _timed_texts(texts, kb)
        started = time.perf_counter()
        _build_hnsw(pg_url, BENCH_KB)
        pg["hnsw_build_seconds"] = round(time.perf_counter() - started, 1)
        pg["hnsw"] = {}
        for ef in sorted({40, ef_search, 200}):
            searcher = open_store(_with(url, ef_search=str(ef)), home=Path("."))
            try:
                approx, figures = _timed(queries, ids(searcher.open(BENCH_KB)))
            finally:
                searcher.close()
            pg["hnsw"][f"ef_search={ef}"] = {**figures, "recall@10": _recall(approx, exact)}
        store.drop(BENCH_KB)
    finally:
        store.close()
    if progress:
        progress(n, n, "chunks in PostgreSQL")
    return out


def _timed_texts(texts: list[str], kb: KBStore) -> tuple[list[list[str]], dict[str, float]]:
    results, latencies = [], []
    for text in texts:
        started = time.perf_counter()
        results.append([c.chunk_id for c, _ in kb.keyword(text, 10)])
        latencies.append(time.perf_counter() - started)
    return results, _percentiles(latencies)


def run_store_benchmark(
    *,
    settings: Settings,
    pg_url: str,
    scifact: Path | None,
    sizes: list[int],
    ef_search: int = 100,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """SciFact on both stores (unless ``scifact`` is None), then the synthetic scale runs."""
    # A schema of its own (unless the URL names one): the bench drops what it made.
    pg = pg_url if "schema=" in pg_url else _with(pg_url, schema="citewise_bench")
    report: dict[str, Any] = {}
    if scifact is not None:
        with tempfile.TemporaryDirectory(prefix="citewise-store-bench-") as tmp:
            urls = {"sqlite": f"sqlite:///{tmp}", "postgresql": pg}
            report["scifact"] = _scifact(scifact, settings, urls, progress)
    report["scale"] = [_scale(n, pg, ef_search, progress) for n in sizes]
    return report


def format_report(report: dict[str, Any]) -> str:
    lines = []
    if "scifact" in report:
        s = report["scifact"]
        lines.append(f"SciFact: {s['documents']} documents, {s['queries']} queries (minilm)")
        lines.append(f"{'store':<12} {'mode':<8} {'nDCG@10':>8} {'p50 ms':>8} {'p95 ms':>8}")
        for name, figures in s["stores"].items():
            for mode, f in figures["modes"].items():
                lines.append(
                    f"{name:<12} {mode:<8} {f['ndcg@10']:>8.4f} {f['p50_ms']:>8.2f} "
                    f"{f['p95_ms']:>8.2f}"
                )
            index = figures["index"]
            lines.append(
                f"{name:<12} ingest   {index['chunks']} chunks in {index['index_seconds']}s "
                f"({index['chunks_per_second']}/s, warm embedding cache)"
            )
        lines.append(f"postgresql vs sqlite: {s['postgresql_vs_sqlite']}")
    for run in report.get("scale", []):
        sq, pg = run["sqlite"], run["postgresql"]
        lines.append(
            f"{run['chunks']} chunks: ingest/s sqlite {sq['ingest_chunks_per_second']} "
            f"postgresql {pg['ingest_chunks_per_second']}; dense p50/p95 ms: sqlite exact "
            f"{sq['exact']['p50_ms']}/{sq['exact']['p95_ms']}, pg exact "
            f"{pg['exact']['p50_ms']}/{pg['exact']['p95_ms']}; BM25 p50 ms sqlite "
            f"{sq['keyword']['p50_ms']} pg {pg['keyword']['p50_ms']}; HNSW built in "
            f"{pg['hnsw_build_seconds']}s"
        )
        for ef, f in pg["hnsw"].items():
            lines.append(
                f"    pg HNSW {ef}: p50/p95 ms {f['p50_ms']}/{f['p95_ms']}, "
                f"recall@10 {f['recall@10']}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.store SCIFACT --postgres URL``."""
    cli = common.parser("benchmarks.store", __doc__)
    cli.add_argument("dataset", help="the SciFact BEIR folder")
    cli.add_argument(
        "--postgres",
        required=True,
        help="postgresql://… (its own schema: citewise_bench unless ?schema= names one)",
    )
    cli.add_argument("--sizes", default="10000,100000", help="synthetic chunk counts")
    cli.add_argument("--ef-search", type=int, default=100, help="HNSW candidate list")
    cli.add_argument("--skip-scifact", action="store_true")
    common.add_report_options(cli, markdown_beside=False)
    args = cli.parse_args(argv)

    def run() -> int:
        report = run_store_benchmark(
            settings=Settings.from_env(),
            pg_url=args.postgres,
            scifact=None if args.skip_scifact else Path(args.dataset),
            sizes=[int(n) for n in args.sizes.split(",") if n],
            ef_search=args.ef_search,
            progress=lambda done, total, what: common.log(f"{done}/{total} {what}"),
        )
        common.save_report(args.output, report)
        common.print_report(args, report, format_report)
        return 0

    return common.guarded("benchmarks.store", run)


if __name__ == "__main__":
    sys.exit(main())
