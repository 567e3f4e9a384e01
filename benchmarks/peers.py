"""Issue 35: citewise beside its peers on SciFact, same vectors, same run, interleaved rounds.

    CITEWISE_HOME=/work/scratch/peers/home python benchmarks/peers.py /work/shared/data/scifact \\
        --work /work/scratch/peers --rounds 3 --out benchmarks/peers.json

``prepare`` (once, cached under ``--work``): citewise indexes the corpus through
``KnowledgeBase.add_sections`` with its MiniLM embedder behind the embedding cache; its chunks
and window vectors are then read out of that store and the 300 test queries embedded with the
same embedder, so every stack indexes the same units with the same vectors (a peer's row is
one window: its vector, and its chunk's whole text for the keyword side). Each stack then
runs in a fresh process per round (rounds interleave the stacks, so load on the shared machine
falls on all of them alike): build its index from those vectors (timed), search the 300 queries
with top 100 (nDCG@10 on document ids; p50/p95 of the search call, query vectors given: the
query embedding is a cache hit for citewise and precomputed for the peers), peak RSS (VmHWM).

Stacks: ``citewise`` (hybrid; its build is ``add_sections`` with a warm embedding cache, so
chunking, storing and the keyword index, no model), ``citewise-store`` (the build alone,
from what the peers start from: the same chunks and window vectors in memory, written by
the store's ``apply`` into a new knowledge base; its searches are ``citewise``'s),
``sqlite-vec`` (vec0 + FTS5 fused by RRF in one SQL query, the simplest peer), ``bm25s``
(stemmed, keyword only), ``llamaindex`` (QueryFusionRetriever, reciprocal rank, over a
VectorStoreIndex of the same vectors and its bm25s-based BM25Retriever: needs
``llama-index-core`` and ``llama-index-retrievers-bm25``, never a dependency of citewise;
no LLM, one query). ``--main-src DIR`` adds ``citewise-main``: the same citewise stack run
from another checkout's ``src`` (e.g. ``git archive main src | tar -x -C DIR``), so a
change is measured against main in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

STACKS = ("citewise", "citewise-store", "sqlite-vec", "bm25s", "llamaindex")
TOP = 100
RRF_K = 60


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    """Wall and CPU seconds since ``start`` (CPU: this process's, the less noisy figure on a
    shared machine; every stack builds in one thread)."""
    return time.perf_counter() - start[0], time.process_time() - start[1]


def _hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
    return 0.0


def _settings(work: Path, store: Path) -> Any:
    from citewise.config import Settings

    return Settings.from_env().with_overrides(store_url=f"sqlite:///{store}")


def load(dataset: Path, max_docs: int | None) -> tuple[Any, Any, Any]:
    """SciFact, or its first ``max_docs`` documents and the queries all of whose relevant
    documents are among them (a paired comparison, not the published figure)."""
    from citewise.evaluation.beir import load_beir

    corpus, queries, qrels = load_beir(dataset, "test")
    if max_docs is not None:
        corpus = dict(list(corpus.items())[:max_docs])
        queries = {q: t for q, t in queries.items() if q in qrels and set(qrels[q]) <= set(corpus)}
        qrels = {q: qrels[q] for q in queries}
    return corpus, queries, qrels


def _index_citewise(
    dataset: Path, work: Path, store: Path, max_docs: int | None
) -> tuple[Any, Any, tuple[float, float]]:
    from citewise.kb import KnowledgeBase, Library
    from citewise.models import Section

    corpus, _, _ = load(dataset, max_docs)
    library = Library(_settings(work, store))
    kb = KnowledgeBase("scifact", library=library, embedder=library.embedder("minilm"))
    documents = {
        d: [Section(d, t or d, (t or d,), 1, "", d, d, text)] for d, (t, text) in corpus.items()
    }
    started = _clock()
    kb.add_sections(documents)
    return library, kb, _since(started)


def prepare(dataset: Path, work: Path, max_docs: int | None) -> Path:
    """Chunks, window vectors and query vectors, from citewise's own index (cached)."""
    cache = work / f"scifact-minilm-{max_docs or 'all'}.npz"
    if cache.exists():
        return cache
    _, queries, _ = load(dataset, max_docs)
    store = work / f"prepare-store-{max_docs or 'all'}"
    library, kb, _ = _index_citewise(dataset, work, store, max_docs)
    conn = sqlite3.connect(next(store.glob("*.sqlite")))
    rows = conn.execute(
        "SELECT c.rid, c.doc_id, c.text, v.vector FROM vectors v "
        "JOIN chunks c ON c.chunk_id = v.chunk_id ORDER BY c.rid, v.window"
    ).fetchall()
    conn.close()
    embedder = kb.embedder
    qids = list(queries)
    qvecs = np.stack([embedder.embed_query(queries[q]).reshape(-1) for q in qids])
    library.close()
    np.savez(
        cache,
        rids=np.array([r[0] for r in rows], dtype=np.int64),
        doc_ids=np.array([r[1] for r in rows], dtype=str),
        texts=np.array([r[2] for r in rows], dtype=str),
        vectors=np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(
            len(rows), -1
        ),
        qids=np.array(qids, dtype=str),
        qtexts=np.array([queries[q] for q in qids], dtype=str),
        qvecs=qvecs.astype(np.float32),
    )
    return cache


def _texts_file(cache: Path) -> Path:
    """The chunk texts as a JSON list beside ``cache`` (written once, by the parent)."""
    path = cache.with_suffix(".texts.json")
    if not path.exists():
        path.write_text(json.dumps([str(t) for t in np.load(cache)["texts"]]))
    return path


def _inputs(cache: Path, stack: str) -> dict[str, Any]:
    """What ``stack`` is given, and no more: the npz's fixed-width text array (81 MB at
    SciFact size) held in every process was most of each stack's peak RSS. The peers get
    the texts as a list of str; citewise reads the corpus itself and gets only the queries."""
    with np.load(cache) as npz:
        names = ["qids", "qtexts", "qvecs"]
        if stack != "citewise":
            names += ["doc_ids", "vectors"]
        data: dict[str, Any] = {name: npz[name] for name in names}
    if stack != "citewise":
        data["texts"] = json.loads(_texts_file(cache).read_text())
    return data


def _dedupe(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _fts_query(text: str) -> str:
    return " OR ".join(f'"{w}"' for w in re.findall(r"\w+", text.lower())) or '""'


HYBRID_SQL = """
WITH vec AS (
  SELECT rowid AS id, row_number() OVER (ORDER BY distance) AS r
  FROM vec_chunks WHERE embedding MATCH :q AND k = :k
), fts AS (
  SELECT rowid AS id, row_number() OVER (ORDER BY rank) AS r
  FROM fts_chunks WHERE fts_chunks MATCH :text ORDER BY rank LIMIT :k
)
SELECT coalesce(vec.id, fts.id) AS id,
       coalesce(1.0 / (:rrf + vec.r), 0) + coalesce(1.0 / (:rrf + fts.r), 0) AS score
FROM vec FULL OUTER JOIN fts ON vec.id = fts.id
ORDER BY score DESC LIMIT :k
"""


def _run_sqlite_vec(data: Any, tmp: Path) -> tuple[tuple[float, float], Any]:
    import sqlite_vec

    # The interpreter's sqlite3 may be built without loadable extensions: pysqlite3-binary
    # (SQLite 3.51, extensions on) is the peer's driver then.
    try:
        import pysqlite3 as driver  # type: ignore[import-not-found]
    except ImportError:
        driver = sqlite3
    conn = driver.connect(str(tmp / "peer.sqlite"))
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    vectors, texts, doc_ids = data["vectors"], data["texts"], data["doc_ids"]
    started = _clock()
    dim = vectors.shape[1]
    conn.execute(f"CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[{dim}])")
    conn.execute("CREATE VIRTUAL TABLE fts_chunks USING fts5(text, tokenize='porter unicode61')")
    conn.executemany(
        "INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)",
        ((i, v.tobytes()) for i, v in enumerate(vectors)),
    )
    conn.executemany(
        "INSERT INTO fts_chunks(rowid, text) VALUES (?, ?)", enumerate(map(str, texts))
    )
    conn.commit()
    build = _since(started)

    def search(i: int) -> list[str]:
        params = {"q": data["qvecs"][i].tobytes(), "k": TOP, "rrf": RRF_K}
        params["text"] = _fts_query(str(data["qtexts"][i]))
        rows = conn.execute(HYBRID_SQL, params).fetchall()
        return _dedupe([str(doc_ids[r[0]]) for r in rows])

    return build, search


def _run_bm25s(data: Any, tmp: Path) -> tuple[tuple[float, float], Any]:
    import bm25s
    import Stemmer  # type: ignore[import-not-found]

    stemmer = Stemmer.Stemmer("english")
    texts, doc_ids = [str(t) for t in data["texts"]], data["doc_ids"]
    started = _clock()
    retriever = bm25s.BM25()
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever.index(tokens, show_progress=False)
    build = _since(started)

    def search(i: int) -> list[str]:
        q = bm25s.tokenize(
            [str(data["qtexts"][i])], stopwords="en", stemmer=stemmer, show_progress=False
        )
        found, _ = retriever.retrieve(q, k=TOP, show_progress=False, n_threads=1)
        return _dedupe([str(doc_ids[j]) for j in found[0]])

    return build, search


def _run_llamaindex(data: Any, tmp: Path) -> tuple[tuple[float, float], Any]:
    import Stemmer
    from llama_index.core import Settings as LlamaSettings
    from llama_index.core import VectorStoreIndex
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.schema import QueryBundle, TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    # Explicitly none: llama-index then uses its no-op models, never called here (the
    # vectors are given, one query means no generated queries).
    LlamaSettings.llm = None
    LlamaSettings.embed_model = None
    vectors, texts, doc_ids = data["vectors"], data["texts"], data["doc_ids"]
    started = _clock()
    # Each window its own row: QueryFusionRetriever fuses by node hash (text + metadata), so
    # a chunk's windows (the same text) would otherwise merge and add up their ranks. The
    # row is kept out of the text BM25 and the vector index read.
    keys = ["row"]
    nodes = [
        TextNode(
            text=str(t),
            id_=str(i),
            embedding=v.tolist(),
            metadata={"row": i},
            excluded_embed_metadata_keys=keys,
            excluded_llm_metadata_keys=keys,
        )  # fmt: skip
        for i, (t, v) in enumerate(zip(texts, vectors, strict=True))
    ]
    index = VectorStoreIndex(nodes)
    bm25 = BM25Retriever.from_defaults(
        nodes=nodes, similarity_top_k=TOP, stemmer=Stemmer.Stemmer("english"), language="en"
    )
    fusion = QueryFusionRetriever(
        [index.as_retriever(similarity_top_k=TOP), bm25],
        mode="reciprocal_rerank", similarity_top_k=TOP, num_queries=1, use_async=False,
    )  # fmt: skip
    build = _since(started)

    def search(i: int) -> list[str]:
        bundle = QueryBundle(str(data["qtexts"][i]), embedding=data["qvecs"][i].tolist())
        found = fusion.retrieve(bundle)
        return _dedupe([str(doc_ids[int(n.node.node_id)]) for n in found])

    return build, search


class _Given:
    """An embedder that answers one precomputed query vector (fills the query LRU)."""

    def __init__(self, model_id: str, vector: np.ndarray) -> None:
        self.model_id, self.vector = model_id, vector

    def embed_query(self, text: str) -> np.ndarray:
        return self.vector


def _run_citewise(
    data: Any, tmp: Path, dataset: Path, work: Path, max_docs: int | None
) -> tuple[tuple[float, float], Any]:
    _, kb, build = _index_citewise(dataset, work, tmp / "store", max_docs)
    from citewise.embedding.query_lru import QUERY_EMBEDDINGS

    qtexts = [str(t) for t in data["qtexts"]]
    # The peers get the query vectors precomputed: citewise gets the same vectors from its
    # query LRU, filled without loading the model (which the peers do not load either).
    QUERY_EMBEDDINGS.size = len(qtexts) + 1
    for text, vector in zip(qtexts, data["qvecs"], strict=True):
        QUERY_EMBEDDINGS.embed(_Given(kb.embedder.model_id, vector), text)

    def search(i: int) -> list[str]:
        hits = kb.search(qtexts[i], top_k=TOP, search_type="hybrid")
        return _dedupe([h.chunk.doc_id for h in hits])

    return build, search


def _store_updates(work: Path, max_docs: int | None) -> list[Any]:
    """The prepared store's documents, chunks and window vectors as the updates its store's
    ``apply`` takes: the rows the peers are given, in citewise's own form."""
    from citewise.store import DocumentUpdate, SQLiteStore

    store = SQLiteStore(work / f"prepare-store-{max_docs or 'all'}")
    kb = store.open("scifact")
    chunks = kb.get(sorted(kb.chunk_ids()))
    by_doc: dict[str, list[Any]] = {}
    for chunk in sorted(chunks, key=lambda c: (c.doc_id, c.position)):
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    conn = sqlite3.connect(next(store.root.glob("*.sqlite")))
    windows: dict[str, list[bytes]] = {}
    for chunk_id, blob in conn.execute("SELECT chunk_id, vector FROM vectors ORDER BY 1, window"):
        windows.setdefault(chunk_id, []).append(blob)
    conn.close()
    updates = [
        DocumentUpdate(
            document,
            by_doc.get(document.doc_id, []),
            {
                c.chunk_id: np.frombuffer(b"".join(windows[c.chunk_id]), np.float32).reshape(
                    len(windows[c.chunk_id]), -1
                )
                for c in by_doc.get(document.doc_id, [])
            },
        )
        for document in kb.documents()
    ]
    store.close()
    return updates


def _run_citewise_store(tmp: Path, work: Path, max_docs: int | None) -> tuple[float, float]:
    """citewise's index written from chunks and vectors already in memory, as the peers'
    are: the store's ``apply`` into a new knowledge base (its file made, filled, synced and
    switched in), every keyword index included."""
    from citewise.store import SQLiteStore

    updates = _store_updates(work, max_docs)
    store = SQLiteStore(tmp / "store")
    started = _clock()
    with store.rebuild("scifact") as kb:
        kb.apply(updates)
    build = _since(started)
    store.close()
    return build


def run_stack(
    stack: str, dataset: Path, work: Path, cache: Path, max_docs: int | None
) -> dict[str, Any]:
    from citewise.evaluation.beir import _percentiles
    from citewise.evaluation.metrics import evaluate

    _, _, qrels = load(dataset, max_docs)
    data = _inputs(cache, stack)
    with tempfile.TemporaryDirectory(prefix="peers-", dir=work) as tmp:
        if stack == "citewise-store":  # the build alone: its searches are citewise's
            wall, cpu = _run_citewise_store(Path(tmp), work, max_docs)
            return {"build_seconds": round(wall, 3), "build_cpu_seconds": round(cpu, 3)}
        if stack == "citewise":
            build, search = _run_citewise(data, Path(tmp), dataset, work, max_docs)
        elif stack == "sqlite-vec":
            build, search = _run_sqlite_vec(data, Path(tmp))
        elif stack == "llamaindex":
            build, search = _run_llamaindex(data, Path(tmp))
        else:
            build, search = _run_bm25s(data, Path(tmp))
        qids = [str(q) for q in data["qids"]]
        search(0)  # first search loads what it loads: not a query latency
        run, latencies = {}, []
        for i, q in enumerate(qids):
            started = time.perf_counter()
            run[q] = search(i)
            latencies.append(time.perf_counter() - started)
        figures = {k: round(v, 4) for k, v in evaluate(run, qrels).items()}
        return {
            **figures,
            **_percentiles(latencies),
            "build_seconds": round(build[0], 3),
            "build_cpu_seconds": round(build[1], 3),
            "peak_rss_mb": round(_hwm_mb(), 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stacks", default=",".join(STACKS))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--max-docs", type=int)
    parser.add_argument("--main-src", type=Path, help="another checkout's src: citewise-main")
    parser.add_argument(
        "--main-home",
        type=Path,
        help="citewise-main's CITEWISE_HOME (default: the same): a home whose embedding "
        "cache that checkout reads (a cache written in a newer layout is not)",
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child: run this stack once
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    cache = prepare(args.dataset, args.work, args.max_docs)
    _texts_file(cache)
    if args.one:
        print(json.dumps(run_stack(args.one, args.dataset, args.work, cache, args.max_docs)))
        return
    stacks = args.stacks.split(",") + (["citewise-main"] if args.main_src else [])
    rounds: dict[str, list[dict[str, Any]]] = {s: [] for s in stacks}
    for r in range(args.rounds):
        order = stacks[r % len(stacks) :] + stacks[: r % len(stacks)]
        for stack in order:
            env = dict(os.environ)
            if stack == "citewise-main":
                env["PYTHONPATH"] = str(args.main_src.resolve())
                if args.main_home:
                    env["CITEWISE_HOME"] = str(args.main_home.resolve())
            done = subprocess.run(
                [sys.executable, __file__, str(args.dataset), "--work", str(args.work),
                 "--one", stack.removesuffix("-main"),
                 *(["--max-docs", str(args.max_docs)] if args.max_docs else [])],
                capture_output=True, text=True, check=True, env=env,
            )  # fmt: skip
            rounds[stack].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(r, stack, rounds[stack][-1], flush=True)
    data = np.load(cache)
    report: dict[str, Any] = {
        "dataset": "scifact", "max_docs": args.max_docs, "queries": len(data["qids"]),
        "chunk_windows": len(data["rids"]), "top_k": TOP, "rrf_k": RRF_K, "stacks": {},
    }  # fmt: skip
    for stack, runs in rounds.items():
        if not runs:
            continue
        report["stacks"][stack] = {
            key: round(statistics.median(run[key] for run in runs), 4) for key in runs[0]
        } | {"rounds": runs}
    figures = ("ndcg@10", "p50_ms", "p95_ms", "build_seconds", "build_cpu_seconds", "peak_rss_mb")
    pairs = (
        ("citewise", "sqlite-vec", "ratios_vs_sqlite_vec"),
        ("citewise", "citewise-main", "ratios_vs_main"),
        ("citewise-store", "sqlite-vec", "store_build_ratios_vs_sqlite_vec"),
    )
    for name, base_name, label in pairs:
        cw, base = report["stacks"].get(name), report["stacks"].get(base_name)
        if base and cw:
            report[label] = {
                key: round(cw[key] / base[key], 3) for key in figures if base.get(key) and key in cw
            }
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
