"""Keyword search through the impact matrix vs FTS5's bm25() vs bm25s: same rows, time, memory.

For each size, builds (or reuses) a synthetic knowledge base of N windows from SciFact's
vocabulary (evaluation/synthetic.py, as `citewise bench latency` does), then runs SciFact's
queries, interleaved in one process, through: FTS5 alone (main's SQL: ``keyword_rows``
without the matrix), the store's keyword search (the impact matrix, store/sqlite_impact.py)
and bm25s (Snowball-stemmed, English stop words) over the same texts. Reports p50/p95, how
many queries return the same rows with bit-equal scores, the matrix's build time and size.

With ``--hybrid`` it also times the product path on the same knowledge base: the HNSW index
built through the store (default settings, ``store/ann.py``), then ``KnowledgeBase.search``
(hybrid: query embedding, dense ANN, keyword through the matrix, fusion) over the same query
texts, each embedded once (the in-process query LRU emptied first, no text seen before), with
telemetry's stage times, and the embedder alone on the same texts. Each size is measured in a
fresh child process, so its peak RSS is its own; load averages are read before and after.

    python benchmarks/keyword_impact.py ../shared/data/scifact --sizes 5183 100000 \
        --work /tmp/citewise-impact --output benchmarks/keyword-impact
    nice -n 10 python benchmarks/keyword_impact.py ../shared/data/scifact \
        --sizes 100000 1000000 --hybrid --work /work/scratch/scale30/kb \
        --output benchmarks/scale-sqlite-1m-run
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from citewise.evaluation.synthetic import KB_NAME, build_synthetic, query_vectors
from citewise.store import SQLiteStore
from citewise.store.sqlite_impact import folder, tokens
from citewise.store.sqlite_keyword import keyword_rows
from citewise.store.text import query_terms

K = 20  # candidates per ranker, as hybrid search asks
TOP_K = 10  # hybrid search's results (its rankers still take K candidates each)
WARM = 50  # queries run before the timed keyword passes (page cache, tokenizer)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def stats(ms: list[float]) -> dict[str, float]:
    return {"p50": statistics.median(ms), "p95": percentile(ms, 0.95)}


def rss_mb() -> dict[str, float]:
    """This process's resident memory now and its peak so far (MB)."""
    now = 0.0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                now = int(line.split()[1]) / 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rss_mb": round(now, 1), "peak_rss_mb": round(peak, 1)}


def du_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 2**20


class Bm25s:
    """bm25s (Snowball-stemmed, English stop words) over ``texts``, one query at a time."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s
        import snowballstemmer

        self.bm25s = bm25s
        self.size = len(texts)
        self.stemmer = snowballstemmer.stemmer("english")  # PyStemmer's, when installed
        t0 = time.perf_counter()
        self.retriever = bm25s.BM25()
        corpus = bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)
        self.retriever.index(corpus, show_progress=False)
        self.build_s = time.perf_counter() - t0

    def search(self, query: str) -> None:
        bm25s, stemmer = self.bm25s, self.stemmer
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False)
        if tokens.vocab:
            self.retriever.retrieve(tokens, k=min(K, self.size), show_progress=False)


class Timer:
    """Wall and CPU (this thread's) milliseconds of each timed call, per column."""

    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}

    def __call__(self, name: str, call: Any, query: str) -> Any:
        w, c = time.perf_counter(), time.thread_time()
        out = call(query)
        c, w = time.thread_time() - c, time.perf_counter() - w
        self.wall.setdefault(name, []).append(w * 1000)
        self.cpu.setdefault(name, []).append(c * 1000)
        return out

    def stats(self, name: str) -> dict[str, float]:
        return {**stats(self.wall[name]), "cpu_p50": statistics.median(self.cpu[name])}


def run(
    dataset: Path, size: int, work: Path, queries: list[str], warm: list[str], hybrid: bool
) -> dict[str, Any]:
    load = {"before": os.getloadavg()}
    t0 = time.perf_counter()
    synthetic = build_synthetic(work, size, dataset / "corpus.jsonl")
    kb_build_s = time.perf_counter() - t0  # 0-ish when reused from an earlier run
    db = synthetic.root / f"{KB_NAME}.sqlite"
    shutil.rmtree(folder(db), ignore_errors=True)  # the matrix is built (and saved) here, timed
    store = SQLiteStore(synthetic.root, ann_threshold=0, impacts_in_background=False)
    kb = store.open(KB_NAME)
    t0 = time.perf_counter()
    kb.keyword(queries[0], K)  # the store builds its matrix (and saves it) on first use
    build_s = time.perf_counter() - t0
    index = store._impacts._by_kb[KB_NAME]
    memory = {"after_matrix_build": rss_mb()}
    matrix_mb = (
        index.indptr.nbytes + index.positions.nbytes + index.impacts.nbytes + index.rids.nbytes
    ) / 2**20
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as conn:
        texts = [r[0] for r in conn.execute("SELECT text FROM chunks ORDER BY rid")]
    conn.close()
    bm25s = Bm25s(texts)
    memory["after_bm25s_build"] = rss_mb()
    same = 0
    for query in warm:  # warm the page cache for every form
        kb.keyword(query, K)
        with store._read(KB_NAME) as conn:
            keyword_rows(conn, query, K, None)
        bm25s.search(query)

    def fts(query: str) -> list[Any]:
        with store._read(KB_NAME) as conn:
            return keyword_rows(conn, query, K, None)

    def ids(query: str, top: Any = index.top) -> None:
        # The matrix alone: tokens and top k, no chunk read (as bm25s returns).
        top([t[0] for t in tokens(query_terms(query)) if len(t) == 1], K)

    forms: list[tuple[str, Any]] = [
        ("impact", lambda q: kb.keyword(q, K)),
        ("fts5", fts),
        ("impact_ids_only", ids),
        ("bm25s", bm25s.search),
    ]
    # Every query through all four, one after another, the order turned by one each query:
    # the machine is shared, so each form sees the same load (bm25s too, in the same loop).
    timer = Timer()
    for n, query in enumerate(queries):
        found = {}
        for name, call in forms[n % 4 :] + forms[: n % 4]:
            found[name] = timer(name, call, query)
        hits, rows = found["impact"], found["fts5"]
        same += [(c.chunk_id, s) for c, s in hits] == [(r["chunk_id"], r["score"]) for r in rows]
    # As the first report measured bm25s: each form in a loop of its own (warm caches), here
    # in blocks of 50 queries taking turns, so both still share the machine's load.
    for lo in range(0, len(queries), 50):
        for name, call in (forms[0], forms[3]):
            for query in queries[lo : lo + 50]:
                timer(f"{name}_alone", call, query)
    store.close()
    out: dict[str, Any] = {
        "windows": size,
        "queries": len(queries),
        "fts5": timer.stats("fts5"),
        "impact": timer.stats("impact"),
        "impact_ids_only": timer.stats("impact_ids_only"),
        "bm25s": timer.stats("bm25s"),
        "impact_alone": timer.stats("impact_alone"),
        "bm25s_alone": timer.stats("bm25s_alone"),
        "bm25s_build_s": bm25s.build_s,
        "identical": same,
        "kb_build_s": kb_build_s,
        "db_mb": du_mb(db),
        "impact_build_s": build_s,
        "impact_mb": matrix_mb,
        "impact_disk_mb": du_mb(folder(db)),
        "postings": len(index.impacts),
        "terms": len(index.terms),
    }
    del index
    memory["after_keyword"] = rss_mb()
    if hybrid:
        out.update(hybrid_search(synthetic, queries, warm))
        memory["after_hybrid"] = rss_mb()
    memory["after_bm25s"] = rss_mb()
    load["after"] = os.getloadavg()
    out.update(memory=memory, load=load)
    return out


class SearchStages:
    """Each search operation's stage seconds (a telemetry observer)."""

    def __init__(self) -> None:
        self.searches: list[dict[str, float]] = []

    def observe(self, event: Any) -> None:
        if event.kind == "operation" and event.name == "search":
            self.searches.append({**event.stages, "search": event.seconds})


def hybrid_search(synthetic: Any, queries: list[str], warm: list[str]) -> dict[str, Any]:
    """The HNSW build through the store, then hybrid ``KnowledgeBase.search`` by stage."""
    from citewise import telemetry
    from citewise.config import Settings
    from citewise.embedding.query_lru import QUERY_EMBEDDINGS
    from citewise.kb import KnowledgeBase, Library
    from citewise.store import ann

    db = synthetic.root / f"{KB_NAME}.sqlite"
    for path in (ann.index_path(db), Path(f"{ann.index_path(db)}.json")):
        path.unlink(missing_ok=True)  # built here, timed
    store = SQLiteStore(synthetic.root)  # the default ANN threshold, as the product's
    vectors = query_vectors(synthetic, 50)
    t0 = time.perf_counter()
    store.open(KB_NAME).dense(vectors[0], K)
    ann_build_s = time.perf_counter() - t0
    dense_ms = []
    for v in vectors[1:]:
        t = time.perf_counter()
        store.open(KB_NAME).dense(v, K)
        dense_ms.append((time.perf_counter() - t) * 1000)
    approximate = type(store._dense[KB_NAME]).__name__
    store.close()
    out: dict[str, Any] = {
        "ann_build_s": ann_build_s,
        "ann_mb": du_mb(ann.index_path(db)),
        "ann_settings": {
            "connectivity": ann.CONNECTIVITY,
            "expansion_add": ann.EXPANSION_ADD,
            "expansion_search": ann.EXPANSION_SEARCH,
        },
        "dense_store": {**stats(dense_ms), "index": approximate, "queries": len(dense_ms)},
    }
    library = Library(Settings.from_env().with_overrides(store_url=f"sqlite:///{synthetic.root}"))
    try:
        knowledge = KnowledgeBase(KB_NAME, library=library, embedder=library.embedder("minilm"))
        for text in warm:  # loads the model, maps the saved matrix, opens the saved ANN index
            knowledge.search(text, top_k=TOP_K, search_type="hybrid")
        product = library.store
        impacts = product._impacts._by_kb.get(KB_NAME)  # type: ignore[attr-defined]
        out["hybrid_used_matrix"] = impacts is not None
        out["hybrid_dense_index"] = type(product._dense[KB_NAME]).__name__  # type: ignore[attr-defined]
        QUERY_EMBEDDINGS.clear()
        misses = QUERY_EMBEDDINGS.misses
        collector = SearchStages()
        with telemetry.listening(collector):
            for text in queries:
                knowledge.search(text, top_k=TOP_K, search_type="hybrid")
        out["hybrid_queries_embedded"] = QUERY_EMBEDDINGS.misses - misses
        names = list(dict.fromkeys(n for r in collector.searches for n in r))
        out["hybrid_stages"] = {
            n: stats([r.get(n, 0.0) * 1000 for r in collector.searches]) for n in names
        }
        embedder = knowledge.embedder
        embed_ms = []
        for i, text in enumerate(queries):  # the model alone, on texts it has not seen
            t = time.perf_counter()
            embedder.embed_query(f"{text} ({i})")
            embed_ms.append((time.perf_counter() - t) * 1000)
        out["embedder_alone"] = stats(embed_ms)
    finally:
        library.close()
    return out


def report(results: list[dict[str, Any]], argv: str) -> str:
    lines = [
        "# Keyword search: FTS5's BM25 precomputed (impact matrix) vs FTS5 vs bm25s",
        "",
        f"`{argv}` — SciFact queries, k = {K}, interleaved in one process; FTS5 is main's "
        "SQL (top k inside FTS5), the matrix is store/sqlite_impact.py, bm25s is stemmed.",
        "",
        "Both store columns return chunks (rows read from SQLite); *ids only* is the matrix "
        "alone (tokenize + top k, ids and scores), which is what bm25s returns. Each query "
        "goes through all four in turn (the order rotated per query), so all see the same "
        "load; CPU is the thread's CPU time (time.thread_time), which a busy machine's "
        "waits do not inflate.",
        "",
        "| windows | FTS5 p50 / p95 ms | matrix p50 / p95 ms | ids only p50 / p95 ms "
        "| bm25s p50 / p95 ms | matrix / FTS5 p50 | matrix / bm25s p50 "
        "| ids only / bm25s p50 | matrix / bm25s CPU p50 | identical rows+scores "
        "| matrix build s | matrix MB |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        f, m, i, b = r["fts5"], r["impact"], r["impact_ids_only"], r["bm25s"]
        lines.append(
            f"| {r['windows']:,} | {f['p50']:.2f} / {f['p95']:.2f} | {m['p50']:.2f} / "
            f"{m['p95']:.2f} | {i['p50']:.2f} / {i['p95']:.2f} | {b['p50']:.2f} / "
            f"{b['p95']:.2f} | {m['p50'] / f['p50']:.2f}× | {m['p50'] / b['p50']:.2f}× "
            f"| {i['p50'] / b['p50']:.2f}× | {m['cpu_p50'] / b['cpu_p50']:.2f}× "
            f"| {r['identical']} of {r['queries']} "
            f"| {r['impact_build_s']:.1f} | {r['impact_mb']:.1f} |"
        )
    lines += [
        "",
        "Each in a loop of its own (blocks of 50 queries taking turns), as the first report "
        "timed bm25s:",
        "",
        "| windows | matrix p50 / p95 ms | bm25s p50 / p95 ms | matrix / bm25s p50 "
        "| matrix / bm25s CPU p50 |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        m, b = r["impact_alone"], r["bm25s_alone"]
        lines.append(
            f"| {r['windows']:,} | {m['p50']:.2f} / {m['p95']:.2f} | {b['p50']:.2f} / "
            f"{b['p95']:.2f} | {m['p50'] / b['p50']:.2f}× | {m['cpu_p50'] / b['cpu_p50']:.2f}× |"
        )
    hybrid = [r for r in results if "hybrid_stages" in r]
    if hybrid:
        lines += [
            "",
            f"Hybrid `KnowledgeBase.search` (top {TOP_K}, {K} candidates per ranker), each "
            "query embedded once (query LRU emptied, texts not seen before), p50 / p95 ms by "
            "telemetry stage; the embedder alone on the same texts; the ANN built through "
            "the store (default settings) before timing.",
            "",
            "| windows | search | embed_query | dense | keyword | fuse | embedder alone "
            "| dense (store, ANN) | search / FTS5 keyword p50 | ANN build s | ANN MB "
            "| peak RSS MB (after keyword passes, bm25s built / after hybrid) "
            "| load avg before / after |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
            "| ---: | ---: |",
        ]
        for r in hybrid:
            st = r["hybrid_stages"]

            def cell(name: str, st: dict[str, Any] = st) -> str:
                c = st.get(name)
                return f"{c['p50']:.2f} / {c['p95']:.2f}" if c else "–"

            e, d, mem = r["embedder_alone"], r["dense_store"], r["memory"]
            lines.append(
                f"| {r['windows']:,} | {cell('search')} | {cell('embed_query')} "
                f"| {cell('dense')} | {cell('keyword')} | {cell('fuse')} "
                f"| {e['p50']:.2f} / {e['p95']:.2f} | {d['p50']:.2f} / {d['p95']:.2f} "
                f"| {st['search']['p50'] / r['fts5']['p50']:.2f}× | {r['ann_build_s']:.0f} "
                f"| {r['ann_mb']:.0f} | {mem['after_keyword']['peak_rss_mb']:,.0f} / "
                f"{mem['after_hybrid']['peak_rss_mb']:,.0f} "
                f"| {r['load']['before'][0]:.1f} / {r['load']['after'][0]:.1f} |"
            )
    return "\n".join(lines) + "\n"


def measure_in_child(args: argparse.Namespace, size: int) -> dict[str, Any]:
    """One size in a fresh process: its peak RSS is that size's alone."""
    command = [sys.executable, __file__, str(args.dataset), "--sizes", str(size), "--child"]
    command += ["--queries", str(args.queries), "--work", str(args.work)]
    command += ["--hybrid"] if args.hybrid else []
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="SciFact BEIR folder")
    parser.add_argument("--sizes", type=int, nargs="+", default=[5183, 100_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--work", type=Path, default=Path("/tmp/citewise-impact"))
    parser.add_argument("--output", type=Path, help="path stem for .md and .json")
    parser.add_argument("--hybrid", action="store_true", help="also HNSW and hybrid search")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    lines = (args.dataset / "queries.jsonl").read_text().splitlines()
    queries = [json.loads(line)["text"] for line in lines[: args.queries]]
    # Warm-up texts of their own: none of the timed texts has been searched or embedded.
    warm = [json.loads(line)["text"] for line in lines[args.queries : args.queries + WARM]]
    if args.child:
        result = run(args.dataset, args.sizes[0], args.work, queries, warm, args.hybrid)
        print(json.dumps(result))
        return
    argv = f"python benchmarks/keyword_impact.py DATASET --sizes {' '.join(map(str, args.sizes))}"
    argv += " --hybrid" if args.hybrid else ""
    results = []
    for n in args.sizes:
        results.append(measure_in_child(args, n))
        text = report(results, argv)
        print(text, flush=True)
        if args.output:  # after each size: a long run keeps what it measured
            args.output.with_suffix(".md").write_text(text)
            args.output.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
