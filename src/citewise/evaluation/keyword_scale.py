"""Keyword search at scale: the raw FTS5 floor, and a bound on OR queries over common terms.

FTS5 answers ``"a" OR "b" OR …`` ordered by bm25 by scoring every chunk that holds any of
the terms, so a query with a few common words costs in proportion to their postings. The
bound measured here drops the terms found in more than a fraction of the chunks (their IDF,
hence their share of a BM25 score, is small), keeping at least the rarest term; document
frequencies come from an ``fts5vocab`` table over the same index, terms stemmed by a
temporary FTS5 table with the same tokenizer. It is measured beside the unbounded query:
latency, overlap of the top 10, and nDCG@10 on a dataset with judgements.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from citewise.evaluation.beir import _dedupe, _percentiles
from citewise.evaluation.metrics import Qrels, evaluate
from citewise.store.sqlite_schema import fts_query
from citewise.store.text import query_terms

__all__ = ["fts_floor", "keyword_bound_report"]

CUTS = (0.02, 0.05, 0.1)  # the largest share of chunks a kept term may appear in
DEPTH = 100
TOKENIZER = "porter unicode61 remove_diacritics 2"  # chunks_fts's (store/sqlite_schema.py)


def _connect(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)


def _raw(conn: sqlite3.Connection, match: str, k: int) -> list[int]:
    if not match:
        return []
    rows = conn.execute(
        "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?", (match, k)
    )
    return [row[0] for row in rows]


def fts_floor(db: Path, texts: Sequence[str], k: int) -> dict[str, float]:
    """A raw FTS5 BM25 query on the same file (no join, no chunk rows): p50/p95."""
    conn = _connect(db)
    try:
        _raw(conn, fts_query(texts[0]), k)
        latencies = []
        for text in texts:
            started = time.perf_counter()
            _raw(conn, fts_query(text), k)
            latencies.append(time.perf_counter() - started)
        return _percentiles(latencies)
    finally:
        conn.close()


class _Bounder:
    """Document frequencies of a query's (stemmed) terms, from the index itself."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute("CREATE VIRTUAL TABLE temp.cw_df USING fts5vocab(main, 'chunks_fts', 'row')")
        conn.execute(f"CREATE VIRTUAL TABLE temp.cw_q USING fts5(text, tokenize='{TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE temp.cw_qv USING fts5vocab(temp, 'cw_q', 'instance')")
        self.total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]

    def frequencies(self, text: str) -> list[tuple[str, float]]:
        """(term as typed, share of chunks holding its stem), rarest first."""
        terms = query_terms(text)
        self.conn.executemany(
            "INSERT INTO temp.cw_q (rowid, text) VALUES (?, ?)",
            [(i + 1, t) for i, t in enumerate(terms)],
        )
        stems = dict(self.conn.execute("SELECT doc, term FROM temp.cw_qv"))
        self.conn.execute("DELETE FROM temp.cw_q")
        out = []
        for i, term in enumerate(terms):
            row = self.conn.execute(
                "SELECT doc FROM temp.cw_df WHERE term = ?", (stems.get(i + 1, term),)
            ).fetchone()
            out.append((term, (row[0] if row else 0) / max(1, self.total)))
        return sorted(out, key=lambda item: item[1])

    def bounded(self, text: str, cut: float) -> str:
        found = self.frequencies(text)
        kept = [t for t, share in found if share <= cut] or [t for t, _ in found[:1]]
        return " OR ".join(f'"{t}"' for t in kept)


def keyword_bound_report(
    db: Path, queries: Mapping[Any, str], qrels: Qrels | None
) -> dict[str, Any]:
    """Unbounded FTS5 OR queries beside bounded ones: latency, top-10 overlap, nDCG@10."""
    conn = _connect(db)
    try:
        bounder = _Bounder(conn)
        doc_of = dict(conn.execute("SELECT rid, doc_id FROM chunks")) if qrels else {}
        ids = list(queries)
        texts = [queries[q] for q in ids]

        def run(build: Any) -> tuple[dict[str, list[str]], list[list[int]], dict[str, float]]:
            found, latencies = [], []
            for text in texts:
                started = time.perf_counter()
                found.append(_raw(conn, build(text), DEPTH))
                latencies.append(time.perf_counter() - started)
            docs = {
                str(q): _dedupe([doc_of.get(r, "") for r in f])
                for q, f in zip(ids, found, strict=True)
            }
            return docs, found, _percentiles(latencies)

        _raw(conn, fts_query(texts[0]), DEPTH)
        docs, full, timing = run(fts_query)
        out: dict[str, Any] = {"chunks": bounder.total, "or_query": timing}
        if qrels:
            out["or_query"]["ndcg@10"] = evaluate(docs, qrels)["ndcg@10"]
        shares = [share for text in texts for _, share in bounder.frequencies(text)]
        out["terms_per_query"] = round(len(shares) / max(1, len(texts)), 1)
        out["share_of_terms_over_cut"] = {
            str(cut): round(sum(s > cut for s in shares) / max(1, len(shares)), 3) for cut in CUTS
        }
        for cut in CUTS:
            docs_b, found_b, timing_b = run(lambda text, cut=cut: bounder.bounded(text, cut))
            overlap = sum(
                len(set(a[:10]) & set(b[:10])) for a, b in zip(full, found_b, strict=True)
            )
            entry = {
                **timing_b,
                "overlap@10": round(overlap / max(1, sum(len(a[:10]) for a in full)), 4),
            }
            if qrels:
                entry["ndcg@10"] = evaluate(docs_b, qrels)["ndcg@10"]
            out[f"bounded_{cut}"] = entry
        return out
    finally:
        conn.close()
