"""`citewise bench latency`: per-stage query latency beside its floors, at three sizes.

For SciFact (indexed through the service layer) and synthetic knowledge bases of N windows
(evaluation/synthetic.py): hybrid search's stages as telemetry times them (p50/p95), the
store's dense search exact and through the ANN index (with recall@10 against exact), its
keyword search, and the floors measured in the same run on the same data: the raw matrix
product, a raw FTS5 query on the same file, the embedder alone, rank_bm25 and bm25s. Resident
memory per knowledge base loaded is measured in a fresh process per search mode. The hybrid
rows embed every query (the query LRU is emptied first); the matrix product is also timed with
one BLAS thread in a fresh process (the floor of a single-threaded exact search).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from citewise import telemetry
from citewise.config import Settings, child_environment
from citewise.embedding.query_lru import QUERY_EMBEDDINGS
from citewise.evaluation.beir import _index, _percentiles, load_beir
from citewise.evaluation.keyword_scale import fts_floor, keyword_bound_report
from citewise.evaluation.synthetic import KB_NAME, build_synthetic, query_vectors
from citewise.kb import KnowledgeBase, Library, Progress
from citewise.store import SQLiteStore

__all__ = ["format_report", "run_latency_benchmark"]

# Stage order in the report; stages not listed (a new one) follow in the order seen.
STAGES = ("embed_query", "dense", "keyword", "fuse", "hydrate", "rerank", "expand")
K = 10
RANK_BM25_MAX = 200_000  # chunks: rank_bm25 scores every document in Python per query


class _Stages:
    """Collects each search operation's stage seconds (a telemetry observer)."""

    def __init__(self) -> None:
        self.searches: list[dict[str, float]] = []

    def observe(self, event: telemetry.Event) -> None:
        if event.kind == telemetry.OPERATION and event.name == "search":
            self.searches.append({**event.stages, "search": event.seconds})


def _timed(items: Iterable[Any], run: Callable[[Any], object]) -> dict[str, float]:
    latencies = []
    for item in items:
        started = time.perf_counter()
        run(item)
        latencies.append(time.perf_counter() - started)
    return _percentiles(latencies)


def _stage_table(kb: KnowledgeBase, texts: Sequence[str]) -> dict[str, Any]:
    QUERY_EMBEDDINGS.clear()  # an earlier size's searches of the same texts
    started = time.perf_counter()
    kb.search(texts[0], top_k=K, search_type="hybrid")  # loads the index: timed apart
    first = round(time.perf_counter() - started, 3)
    # Every timed search embeds its query: none is answered by the in-process query LRU.
    QUERY_EMBEDDINGS.clear()
    collector = _Stages()
    with telemetry.listening(collector):
        for text in texts:
            kb.search(text, top_k=K, search_type="hybrid")
    names = [s for s in STAGES if any(s in r for r in collector.searches)]
    names += sorted({s for r in collector.searches for s in r} - {*names, "search"})
    table = {
        name: _percentiles([r.get(name, 0.0) for r in collector.searches])
        for name in [*names, "search"]
    }
    # Widening hits to their neighbours is off by default: timed in a pass of its own.
    QUERY_EMBEDDINGS.clear()
    widened = _Stages()
    with telemetry.listening(widened):
        for text in texts:
            kb.search(text, top_k=K, search_type="hybrid", context_window=1)
    table["expand (context_window=1)"] = _percentiles(
        [r.get("expand", 0.0) for r in widened.searches]
    )
    return {"first_search_seconds": first, "stages": table}


def _dense(
    root: Path, vectors: np.ndarray, ann: bool, truth: list[list[str]] | None
) -> dict[str, Any]:
    """Store-level dense search, exact or through the ANN index, and its floor."""
    store = SQLiteStore(root, ann_threshold=1 if ann else 0)
    try:
        kb = store.open(KB_NAME if KB_NAME in store.names() else store.names()[0])
        started = time.perf_counter()
        kb.dense(vectors[0], K)  # loads the matrix, or builds/updates the index
        out: dict[str, Any] = {"load_seconds": round(time.perf_counter() - started, 2)}
        out.update(_timed(vectors, lambda q: kb.dense(q, K)))
        found = [[c.chunk_id for c, _ in kb.dense(q, K)] for q in vectors]
        if truth is not None:
            hits = sum(len(set(f) & set(t)) for f, t in zip(found, truth, strict=True))
            out["recall@10"] = round(hits / max(1, sum(len(t) for t in truth)), 4)
        else:
            index = store._dense[kb.name]
            matrix = getattr(index, "matrix", None)
            if matrix is not None:
                out["floor_matrix_product"] = _timed(vectors, lambda q: matrix @ q)
                out["floor_matrix_product_1_thread"] = _single_thread_floor(matrix, vectors)
                out["windows"] = int(matrix.shape[0])
            out["_truth"] = found
        return out
    finally:
        store.close()


_MATMUL_PROBE = """
import sys, time, numpy as np
matrix, queries = np.load(sys.argv[1]), np.load(sys.argv[2])
matrix @ queries[0]
for q in queries:
    started = time.perf_counter()
    matrix @ q
    print(time.perf_counter() - started)
"""
# The BLAS thread pools read these when numpy loads: set before the probe starts.
_ONE_THREAD = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def _single_thread_floor(matrix: np.ndarray, vectors: np.ndarray) -> dict[str, float]:
    """The matrix product over the same matrix with one BLAS thread, in a fresh process: the
    floor of a single-threaded exact search (the default floor may use every core)."""
    with tempfile.TemporaryDirectory(prefix="citewise-matmul-") as tmp:
        paths = [str(Path(tmp) / "matrix.npy"), str(Path(tmp) / "queries.npy")]
        np.save(paths[0], matrix)
        np.save(paths[1], vectors)
        done = subprocess.run(
            [sys.executable, "-c", _MATMUL_PROBE, *paths],
            capture_output=True, text=True, check=True, env=child_environment(**_ONE_THREAD),
        )  # fmt: skip
    return _percentiles([float(line) for line in done.stdout.split()])


def _bm25s(texts: list[str], queries: Sequence[str]) -> dict[str, Any]:
    import bm25s

    started = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    index_seconds = round(time.perf_counter() - started, 1)

    def search(text: str) -> object:
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        return retriever.retrieve(tokens, k=min(K, len(texts)), show_progress=False, n_threads=1)

    return {**_timed(queries, search), "index_seconds": index_seconds}


def _rank_bm25(texts: list[str], queries: Sequence[str]) -> dict[str, Any]:
    from citewise.evaluation.baselines import rank_bm25_baseline

    baseline = rank_bm25_baseline({str(i): ("", t) for i, t in enumerate(texts)}, depth=K)
    return {**_timed(queries, baseline.rank), "index_seconds": baseline.index_seconds}


def _baselines(db: Path, queries: Sequence[str]) -> dict[str, Any]:
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as conn:
        texts = [row[0] for row in conn.execute("SELECT text FROM chunks ORDER BY rid")]
    conn.close()
    out: dict[str, Any] = {"bm25s": _bm25s(texts, queries)}
    if len(texts) <= RANK_BM25_MAX:
        out["rank_bm25"] = _rank_bm25(texts, queries)
    else:
        out["rank_bm25"] = {"skipped": f"over {RANK_BM25_MAX} chunks (pure-Python scoring)"}
    return out


_RSS_PROBE = """
import sys, numpy as np
from pathlib import Path
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS'):
            return int(line.split()[1]) / 1024
from citewise.store import SQLiteStore
before = rss()
store = SQLiteStore(Path(sys.argv[1]), ann_threshold=int(sys.argv[2]))
kb = store.open(store.names()[0])
for q in np.random.default_rng(0).standard_normal((20, int(sys.argv[3])), dtype=np.float32):
    kb.dense(q / np.linalg.norm(q), 10)
print(round(before, 1), round(rss(), 1))
"""


def _rss(root: Path, ann: bool, dim: int = 384) -> dict[str, float]:
    """Resident memory of a fresh process before and after loading one knowledge base and
    running 20 dense searches (MB)."""
    done = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE, str(root), "1" if ann else "0", str(dim)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    before, after = map(float, done.stdout.split())
    return {"rss_before_mb": before, "rss_after_mb": after, "rss_kb_mb": round(after - before, 1)}


def _measure(
    name: str,
    root: Path,
    kb: KnowledgeBase,
    texts: Sequence[str],
    vectors: np.ndarray,
    progress: Progress | None,
) -> dict[str, Any]:
    db = next(root.glob("*.sqlite"))
    out: dict[str, Any] = {"name": name, **_stage_table(kb, texts)}
    exact = _dense(root, vectors, ann=False, truth=None)
    truth = exact.pop("_truth")
    out["dense_exact"] = exact
    out["dense_ann"] = _dense(root, vectors, ann=True, truth=truth)
    store = SQLiteStore(root, ann_threshold=0)
    try:
        handle = store.open(db.stem)
        out["chunks"] = len(handle.chunk_ids())
        out["keyword"] = _timed(texts, lambda t: handle.keyword(t, K))
    finally:
        store.close()
    out["floor_fts5"] = fts_floor(db, texts, K)
    out["baselines"] = _baselines(db, texts)
    out["memory"] = {"exact": _rss(root, ann=False), "ann": _rss(root, ann=True)}
    if progress:
        progress(1, 1, f"measured {name}")
    return out


def _embedder_floor(kb: KnowledgeBase, texts: Sequence[str]) -> dict[str, float]:
    embedder = kb.embedder
    embedder.embed_query(texts[0])
    # A fresh text each time, so no cache (the embedding cache or a query LRU) answers it.
    return _timed([f"{t} ({i})" for i, t in enumerate(texts)], embedder.embed_query)


def run_latency_benchmark(
    dataset: Path,
    *,
    settings: Settings,
    sizes: Sequence[int],
    synthetic_folder: Path,
    queries: int = 100,
    embedder_name: str = "minilm",
    progress: Progress | None = None,
    partial: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """The report: SciFact, then each synthetic size (built under ``synthetic_folder`` once).

    ``partial`` gets the report so far after each size (a long run keeps what it measured)."""
    corpus, all_queries, qrels = load_beir(dataset, "test")
    texts = list(all_queries.values())[:queries]
    report: dict[str, Any] = {"queries": len(texts), "k": K, "sizes": []}
    with tempfile.TemporaryDirectory(prefix="citewise-latency-") as tmp:
        library = Library(settings.with_overrides(store_url=f"sqlite:///{tmp}"))
        embedder = library.embedder(embedder_name)
        kb = KnowledgeBase("scifact", library=library, embedder=embedder)
        report["index"] = _index(kb, corpus, progress)
        report["floor_embed_query"] = _embedder_floor(kb, texts)
        report["embedder"] = embedder.model_id
        vectors = np.stack([embedder.embed_query(t).reshape(-1) for t in texts])
        report["sizes"].append(_measure("scifact", Path(tmp), kb, texts, vectors, progress))
        report["keyword_bound"] = keyword_bound_report(
            Path(tmp) / "scifact.sqlite", all_queries, qrels
        )
        library.close()
    if partial:
        partial(report)
    for n in sizes:
        built = build_synthetic(synthetic_folder, n, dataset / "corpus.jsonl", progress=progress)
        library = Library(settings.with_overrides(store_url=f"sqlite:///{built.root}"))
        try:
            kb = KnowledgeBase(KB_NAME, library=library, embedder=library.embedder(embedder_name))
            entry = _measure(
                f"synthetic-{n}", built.root, kb, texts, query_vectors(built, len(texts)), progress
            )
            entry["keyword_bound"] = keyword_bound_report(
                built.root / f"{KB_NAME}.sqlite", dict(enumerate(texts)), None
            )
            report["sizes"].append(entry)
        finally:
            library.close()
        if partial:
            partial(report)
    return report


def format_report(report: dict[str, Any]) -> str:
    """The Markdown tables of benchmarks/latency.md."""
    sizes = report["sizes"]
    head = (
        "| | "
        + " | ".join(f"{s['name']} ({s['dense_exact'].get('windows', '?')} windows)" for s in sizes)
        + " |"
    )
    rule = "|---|" + "---|" * len(sizes)
    lines = ["### Hybrid search by stage, p50 / p95 ms", "", head, rule]
    names = list(dict.fromkeys(n for s in sizes for n in s["stages"]))
    for name in names:
        cells = [s["stages"].get(name) for s in sizes]
        lines.append(
            f"| {name} | "
            + " | ".join(f"{c['p50_ms']} / {c['p95_ms']}" if c else "–" for c in cells)
            + " |"
        )
    lines += ["", "### The store and its floors, p50 / p95 ms", "", head, rule]

    def row(label: str, get: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        cells = []
        for s in sizes:
            c = get(s)
            if c is None or "p50_ms" not in c:
                cells.append(c.get("skipped", "–") if c else "–")
            else:
                extra = f" (recall@10 {c['recall@10']})" if "recall@10" in c else ""
                cells.append(f"{c['p50_ms']} / {c['p95_ms']}{extra}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    row("dense, exact (`DenseIndex`)", lambda s: s["dense_exact"])
    row("floor: raw matrix product", lambda s: s["dense_exact"].get("floor_matrix_product"))
    row(
        "floor: raw matrix product, 1 BLAS thread",
        lambda s: s["dense_exact"].get("floor_matrix_product_1_thread"),
    )
    row("dense, ANN (usearch i8 + exact rescoring)", lambda s: s["dense_ann"])
    row("keyword (`SQLiteKB.keyword`, FTS5 OR)", lambda s: s["keyword"])
    row("floor: raw FTS5 query", lambda s: s["floor_fts5"])
    row("bm25s", lambda s: s["baselines"]["bm25s"])
    row("rank_bm25", lambda s: s["baselines"]["rank_bm25"])
    embed = report["floor_embed_query"]
    lines.append(f"| floor: embedder alone (query) | {embed['p50_ms']} / {embed['p95_ms']} | | |")
    lines += ["", "### Loading and resident memory", "", head, rule]
    loading: list[tuple[str, Callable[[dict[str, Any]], object]]] = [
        ("first hybrid search, s", lambda s: s["first_search_seconds"]),
        ("exact: load matrix, s", lambda s: s["dense_exact"]["load_seconds"]),
        ("ANN: build or open index, s", lambda s: s["dense_ann"]["load_seconds"]),
        ("RSS of the KB, exact, MB", lambda s: s["memory"]["exact"]["rss_kb_mb"]),
        ("RSS of the KB, ANN, MB", lambda s: s["memory"]["ann"]["rss_kb_mb"]),
    ]
    for label, get in loading:
        lines.append(f"| {label} | " + " | ".join(str(get(s)) for s in sizes) + " |")
    lines += ["", "### Keyword: FTS5 OR query vs dropping common terms (raw FTS5, top 100)", ""]
    bounds = [("SciFact", report["keyword_bound"])]
    bounds += [(s["name"], s["keyword_bound"]) for s in sizes[1:] if "keyword_bound" in s]
    lines += ["| | query | p50 / p95 ms | overlap@10 | nDCG@10 |", "|---|---|---|---|---|"]
    for name, b in bounds:
        for label, f in [("OR of all terms", b["or_query"])] + [
            (f"terms in ≤ {key.split('_')[1]} of chunks", v)
            for key, v in b.items()
            if key.startswith("bounded_")
        ]:
            ndcg = f"{f['ndcg@10']:.4f}" if "ndcg@10" in f else "–"
            lines.append(
                f"| {name} | {label} | {f['p50_ms']} / {f['p95_ms']} | "
                f"{f.get('overlap@10', 1.0)} | {ndcg} |"
            )
    return "\n".join(lines) + "\n"
