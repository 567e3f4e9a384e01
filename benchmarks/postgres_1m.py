"""The PostgreSQL store at 100k and 1M synthetic windows: keyword, dense, hybrid, HNSW build.

Usage (a durable cluster: ``python -m tests.pg start DIR --durable``)::

    flock /work/scratch/heavy.lock python benchmarks/postgres_1m.py URL --windows 100000 \\
        [--ef 40,100,200,400] [--queries 100] [--keyword-queries 30] \\
        [--hnsw-m 16 --ef-construction 64] \\
        [--build-memory 2GB --build-workers 1] [--output benchmarks/postgres-1m.json]
        [--baseline REV [--baseline-schema SCHEMA]] [--no-full] [--no-keyword | --no-dense]
        [--ingest-only | --build-only [--rebuild]] [--schema SCHEMA] [--label KEY]

The keyword comparison runs the store's search, ``postgres_bm25.py`` as git revision REV has it
(default main; on its own copy of the corpus, not migrated, with ``--baseline-schema``) and
main's full scoring (unless ``--no-full``).

The corpus is ``evaluation/synthetic.py``'s (clustered 384-dim unit vectors, 40-120 words per
chunk with SciFact's word frequencies, one window per chunk), written straight into the store
(schema ``bench_{windows}``, kept for the next run). Keyword queries are three words drawn
with the corpus's frequencies (frequent words: the hard case); each is run both ways, main's
full scoring (``postgres_terms.BM25_SQL``) and the store's search, interleaved, and their
results compared. Dense recall@10 is against exact search (numpy over the regenerated
vectors). Hybrid is ``retrieval.hybrid.search`` (dense and keyword concurrently, fusion), its
query vector handed over by a fixed embedder. The build's peak memory is the peak summed RSS
of the server's processes while it runs, less theirs before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlencode

import numpy as np
import psycopg
from psycopg import sql

from citewise.evaluation.synthetic import (
    BATCH,
    DIM,
    SyntheticKB,
    _batches,
    _centers,
    _vectors,
    query_vectors,
    vocabulary,
)  # fmt: skip
from citewise.retrieval.hybrid import search
from citewise.store import open_store
from citewise.store import postgres_bm25 as bm25
from citewise.store.postgres import PostgresKB, PostgresStore
from citewise.store.postgres_schema import C_COLUMNS, filter_sql
from citewise.store.postgres_terms import bm25_sql, keyword_params

KB = "synthetic"
# The shared data beside the project (../shared/data), as the other benchmarks read it.
CORPUS = Path(__file__).resolve().parents[1].parent / "shared/data/scifact/corpus.jsonl"


def _with(url: str, **options: object) -> str:
    return f"{url}{'&' if '?' in url else '?'}{urlencode({k: str(v) for k, v in options.items()})}"


def _ms(latencies: Sequence[float]) -> dict[str, float]:
    s = sorted(latencies)
    return {
        "p50_ms": round(1000 * statistics.median(s), 2),
        "p95_ms": round(1000 * s[min(len(s) - 1, int(0.95 * len(s)))], 2),
    }


def _timed(fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - started


def _ingest(store: PostgresStore, n: int, seed: int, corpus: Path) -> float | None:
    """Write the corpus unless a finished one is there; its seconds (None: reused)."""
    done = f"{n}:{seed}"
    if store.exists(KB) and store.open(KB).meta().get("bench_windows") == done:
        return None
    if store.exists(KB):
        store.drop(KB)
    kb = store.create(KB)
    words, p = vocabulary(corpus)
    started = time.perf_counter()
    for i, updates in enumerate(_batches(n, words, p, seed)):
        kb.apply(updates)
        if i % 20 == 0:
            print(f"  {min(n, (i + 1) * BATCH)} windows", flush=True)
    kb.apply(meta={"bench_windows": done})
    return time.perf_counter() - started


def _truth(n: int, seed: int, queries: np.ndarray) -> list[list[str]]:
    centers = _centers(n, seed)
    scores = np.empty((len(queries), n), dtype=np.float32)
    for start in range(0, n, BATCH):
        count = min(BATCH, n - start)
        scores[:, start : start + count] = queries @ _vectors(start, count, centers, seed).T
    top = np.argsort(-scores, axis=1)[:, :10]
    return [[f"s{i}" for i in row] for row in top]


def _full_scoring(store: Any, text: str, k: int) -> list[str]:
    """Main's keyword path: every posting of every query term scored."""
    found = keyword_params(text)
    if found is None:
        return []
    with store._read() as conn:
        info = store._kb_row(conn, KB)
        where, params = filter_sql(None)
        params |= found | {"kb": info["kb_id"], "k": k}
        rows = conn.execute(bm25_sql(where, C_COLUMNS).encode(), params).fetchall()
    return [r[1] for r in rows]


def _bm25_at(rev: str) -> tuple[ModuleType, str]:
    """postgres_bm25.py as git revision ``rev`` has it (the path measured against), its hash."""
    root = Path(__file__).resolve().parents[1]
    git = ["git", "-C", str(root)]
    sha = subprocess.run([*git, "rev-parse", rev], capture_output=True, text=True, check=True)
    text = subprocess.run([*git, "show", f"{rev}:src/citewise/store/postgres_bm25.py"],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    module = ModuleType(f"postgres_bm25_at_{sha.stdout.strip()[:10]}")
    exec(compile(text, f"{rev}:postgres_bm25.py", "exec"), module.__dict__)  # noqa: S102
    return module, sha.stdout.strip()


class OlderSchema:
    """A store's schema read as it is (an older version, not migrated: the baseline's indexes),
    through what _keyword_with and _full_scoring use of PostgresStore."""

    def __init__(self, url: str, schema: str) -> None:
        self.conn = psycopg.connect(url.split("?")[0], autocommit=True)
        self.conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))

    @contextmanager
    def _read(self) -> Iterator[psycopg.Connection[Any]]:
        with self.conn.transaction():
            self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield self.conn

    def _kb_row(self, conn: psycopg.Connection[Any], kb: str) -> dict[str, Any]:
        return PostgresStore._kb_row(self, conn, kb)  # type: ignore[arg-type]


def _keyword_with(bm25: ModuleType, store: Any, text: str, k: int) -> list[str]:
    """PostgresStore.keyword's path (no filter) with ``bm25``'s top_k: its chunk ids."""
    found = keyword_params(text)
    if found is None:
        return []
    with store._read() as conn:
        info = store._kb_row(conn, KB)
        if "idents" not in found and found["lo"] == found["hi"]:
            top = bm25.top_k(conn, info, found["idx"], found["lo"], k, "true", {})
            if top is not None:
                return [c.chunk_id for c, _ in PostgresKB._chunks_of(conn, top)]
    return _full_scoring(store, text, k)


def _keywords(store: PostgresStore, texts: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """Each query at k 10 and 20 by full scoring (unless --no-full), the baseline's search and
    the store's, interleaved (the same noise for all); latencies and whether results agree."""
    base, sha = _bm25_at(args.baseline)
    # The baseline on its own schema (its own indexes) when given, else on the store's.
    older = OlderSchema(args.url, args.baseline_schema) if args.baseline_schema else store
    times: dict[str, list[float]] = {"full_scoring": [], "baseline": [], "store": []}
    same_base = same_full = 0
    for k in (10, 20):
        for text in texts:
            want = None
            if args.full:
                want, t = _timed(_full_scoring, store, text, k)
                times["full_scoring"].append(t)
            was, t = _timed(_keyword_with, base, older, text, k)
            times["baseline"].append(t)
            got, t = _timed(_keyword_with, bm25, store, text, k)
            times["store"].append(t)
            same_base += got == was
            same_full += got == want
    n = len(times["store"])
    out: dict[str, Any] = {"baseline_rev": sha, "baseline_schema": args.baseline_schema,
                           "pairs": n}  # fmt: skip
    for name, lat in times.items():
        if lat:
            out[name] = _ms(lat) | {"mean_ms": round(1000 * statistics.mean(lat), 2)}
    for name in ("baseline", "full_scoring"):
        if times[name]:
            out[f"store_vs_{name}"] = {
                q: round(out["store"][f"{q}_ms"] / out[name][f"{q}_ms"], 3)
                for q in ("p50", "p95", "mean")
            }
    out["identical_to_baseline"] = f"{same_base}/{n}"
    if args.full:
        out["identical_to_full_scoring"] = f"{same_full}/{n}"
    print("keyword", json.dumps(out), flush=True)
    return out


def _server_rss(folder: Path) -> int:
    """Summed RSS (bytes) of the cluster's processes (the postmaster and its children)."""
    pid = (folder / "data" / "postmaster.pid").read_text().split()[0]
    out = subprocess.run(["ps", "-o", "rss=", "--ppid", pid, "-p", pid],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return 1024 * sum(int(x) for x in out.split())


def _builders_memory(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Summed private (RssAnon) and shared (RssShmem: shared buffers touched and the parallel
    build's graph) memory, bytes, of the backends building an index on windows (the leader
    and its parallel workers): other work on the server (another index build) is not in it."""
    pids = [r[0] for r in conn.execute(
        "SELECT a.pid FROM pg_stat_activity a JOIN pg_stat_progress_create_index p "
        "ON a.pid = p.pid OR a.leader_pid = p.pid WHERE p.relid::regclass::text LIKE '%%windows'"
    ).fetchall()]  # fmt: skip
    out = {"RssAnon": 0, "RssShmem": 0}
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            key, _, value = line.partition(":")
            if key in out:
                out[key] += 1024 * int(value.split()[0])
    return out


def _build(url: str, folder: Path) -> dict[str, Any]:
    before = _server_rss(folder)
    peak = [before]
    builders = {"RssAnon": 0, "RssShmem": 0}
    stop = threading.Event()

    def sample() -> None:
        with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
            while not stop.wait(0.5):
                peak[0] = max(peak[0], _server_rss(folder))
                for key, value in _builders_memory(conn).items():
                    builders[key] = max(builders[key], value)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    store = open_store(_with(url, hnsw_threshold=1), home=Path("."))
    try:
        _, seconds = _timed(store.open(KB).apply)  # crossing the threshold builds
    finally:
        store.close()
        stop.set()
        sampler.join()
    return {
        "seconds": round(seconds, 1), "peak_rss_mb": round((peak[0] - before) / 2**20),
        "builders_peak_mb": {k: round(v / 2**20) for k, v in builders.items()},
    }  # fmt: skip


class FixedEmbedder:
    """Hands the hybrid search the query vector of each query text (synthetic: no model)."""

    model_id, dim, window_chars = "bench-fixed", DIM, 1000

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self.vectors[text]


def run(args: argparse.Namespace) -> dict[str, Any]:
    n, seed = args.windows, 0
    url = _with(args.url, schema=args.schema or f"bench_{n}", hnsw_threshold=10 * n + 1,
                build_memory=args.build_memory, build_workers=args.build_workers,
                hnsw_m=args.hnsw_m, ef_construction=args.ef_construction)  # fmt: skip
    store = open_store(url, home=Path("."))
    assert isinstance(store, PostgresStore)
    out: dict[str, Any] = {"windows": n, "queries": args.queries}
    try:
        seconds = _ingest(store, n, seed, args.corpus)
        if seconds is not None:
            out["ingest_windows_per_second"] = round(n / seconds)
        if args.ingest_only:  # the corpus alone (then build and search in later runs)
            return out
        words, p = vocabulary(args.corpus)
        rng = np.random.default_rng([seed, 7])
        texts = [" ".join(rng.choice(words, size=3, p=p)) for _ in range(args.queries)]
        # Keyword: full scoring, the baseline's search and the store's, interleaved.
        if args.keyword:
            out["keyword"] = _keywords(store, texts[: args.keyword_queries], args)
        if not args.dense:
            return out
        with store._conn() as conn:
            row = conn.execute("SELECT kb_id, hnsw_dim FROM kbs WHERE name = %s", (KB,)).fetchone()
            if row and row[1] and args.rebuild:  # another graph shape on the same corpus
                conn.execute(f"DROP INDEX IF EXISTS windows_hnsw_{int(row[0])}".encode())
                conn.execute("UPDATE kbs SET hnsw_dim = NULL WHERE kb_id = %s", (row[0],))
                row = (row[0], None)
        if not (row and row[1]):
            out["hnsw_build"] = _build(url, Path(args.cluster))
            print("build", out["hnsw_build"], flush=True)
        if args.build_only:
            return out
        queries = query_vectors(SyntheticKB(Path("."), n, seed), args.queries)
        truth = _truth(n, seed, queries)
        out["hnsw"] = {}
        for ef in args.ef:
            searcher = open_store(_with(url, ef_search=ef), home=Path("."))
            try:
                handle = searcher.open(KB)
                lat, hits = [], 0
                for q, want in zip(queries, truth, strict=True):
                    got, t = _timed(handle.dense, q, 10)
                    lat.append(t)
                    hits += len({c.chunk_id for c, _ in got} & set(want))
                out["hnsw"][f"ef_search={ef}"] = {**_ms(lat), "recall@10": hits / (10 * len(lat))}
                print(ef, out["hnsw"][f"ef_search={ef}"], flush=True)
                embedder = FixedEmbedder(dict(zip(texts, queries, strict=True)))
                lat = [_timed(search, handle, embedder, t)[1] for t in texts]
                out["hnsw"][f"ef_search={ef}"]["hybrid"] = _ms(lat)
                print("  hybrid", _ms(lat), flush=True)
            finally:
                searcher.close()
        with store._conn() as conn:
            sizes = conn.execute(
                "SELECT relname, pg_relation_size(c.oid) FROM pg_class c JOIN pg_namespace s "
                "ON s.oid = c.relnamespace WHERE s.nspname = %s ORDER BY 2 DESC LIMIT 8",
                (args.schema or f"bench_{n}",),
            ).fetchall()
        out["relation_mb"] = {name: round(size / 2**20) for name, size in sizes}
    finally:
        store.close()
    out["settings"] = {k: getattr(args, k) for k in
                       ("hnsw_m", "ef_construction", "build_memory", "build_workers")}  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--cluster", default="/work/scratch/pg30/bench")
    parser.add_argument("--windows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--ef", type=lambda s: [int(x) for x in s.split(",")],
                        default=[40, 100, 200, 400])  # fmt: skip
    parser.add_argument("--hnsw-m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--build-memory", default="2GB")
    parser.add_argument("--build-workers", type=int, default=1)
    parser.add_argument("--no-keyword", dest="keyword", action="store_false")
    parser.add_argument("--schema", help="the store's schema (default bench_WINDOWS)")
    parser.add_argument("--no-dense", dest="dense", action="store_false")
    parser.add_argument("--build-only", action="store_true", help="(re)build HNSW, stop")
    parser.add_argument("--ingest-only", action="store_true", help="write the corpus, stop")
    # At 1M, full scoring of frequent words takes seconds a query: compare on the first N.
    parser.add_argument("--keyword-queries", type=int)
    parser.add_argument("--no-full", dest="full", action="store_false",
                        help="keyword: skip full scoring (seconds a query at 1M)")  # fmt: skip
    parser.add_argument("--baseline", default="main", help="git revision of the keyword path "
                        "to compare with (its postgres_bm25.py)")  # fmt: skip
    parser.add_argument("--baseline-schema", help="the baseline's own copy of the corpus "
                        "(at its schema version: not migrated)")  # fmt: skip
    parser.add_argument("--label", help="the run's key in the output (default: WINDOWS)")
    parser.add_argument("--rebuild", action="store_true", help="drop the HNSW index first")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--output", type=Path, default=Path("benchmarks/postgres-1m.json"))
    args = parser.parse_args()
    result = run(args)
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    report = json.loads(args.output.read_text()) if args.output.exists() else {}
    report[args.label or str(args.windows)] = result
    args.output.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
