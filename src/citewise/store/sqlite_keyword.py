"""The SQLite store's keyword search: FTS5 BM25 over words, CJK bigrams and whole identifiers.

Three FTS5 indexes hold each chunk: ``chunks_fts`` its words (Porter stems), ``chunks_cjk``
its CJK runs as bigrams (``store/cjk.py``) and ``chunks_ident`` its identifiers as whole terms
(``store/identifiers.py``). A query without identifiers is scored exactly as before by the
word (or bigram) index alone. A query naming identifiers adds, per chunk, the identifier
index's BM25 and a tier: chunks holding more of the query's identifiers rank first
(``identifiers.tier_scores``, here in SQL). The PostgreSQL store computes the same scores.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from citewise.models import SearchFilter
from citewise.store import cjk
from citewise.store.cjk_bm25 import cjk_scores
from citewise.store.identifiers import identifier_query
from citewise.store.sqlite_impact import MAX_K, ImpactIndex, impact_rows, scored_rows
from citewise.store.sqlite_schema import (
    C_CHUNK_COLUMNS,
    CHUNK_COLUMNS,
    IDENT_FUNCTION,
    IDENT_STATEMENTS,
    filter_sql,
    fts_query,
    register_functions,
)
from citewise.store.text import STOPWORDS, query_terms

__all__ = ["install", "keyword_rows"]

log = logging.getLogger(__name__)


def install(
    conn: sqlite3.Connection, kb: str, on_upgrade: Callable[[sqlite3.Connection], None]
) -> None:
    """Register the functions; add and fill the indexes a file from an older citewise lacks.

    One transaction per index, so a file is never left half upgraded; ``on_upgrade`` runs
    inside it (the store records its schema version). A version-2 file (no identifier
    index) is upgraded here, in place, the first time this citewise opens it.
    """
    register_functions(conn)
    cjk.install(conn, on_upgrade)
    if _has_table(conn, "chunks_ident"):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _has_table(conn, "chunks_ident"):  # another process may have upgraded it
            count = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            log.warning(
                "knowledge base %r predates the identifier index: adding it (%d chunks)",
                kb,
                count,
            )
            for statement in IDENT_STATEMENTS:
                conn.execute(statement)
            conn.execute(
                f"INSERT INTO chunks_ident (rowid, idents) "
                f"SELECT rid, {IDENT_FUNCTION}(text, anchor) FROM chunks"
            )
            on_upgrade(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return row is not None


def keyword_rows(
    conn: sqlite3.Connection,
    text: str,
    k: int,
    filter: SearchFilter | None,
    impacts: Callable[[], ImpactIndex | None] | None = None,
) -> list[sqlite3.Row]:
    """The ``k`` best chunks for ``text``: rows of ``score`` and the chunk columns.

    ``impacts`` gives the precomputed BM25 matrix (``store/sqlite_impact.py``), which answers
    a plain word query without filters with FTS5's scores, faster; the rest is FTS5's (and
    everything while the matrix is being built). A query with CJK is scored over the bigram
    index by ``cjk_bm25`` (FTS5's formula, with the statistics of every chunk).
    """
    idents = identifier_query(text)
    if k <= 0:
        return []
    where, params = filter_sql(filter)
    if cjk.has_cjk(text):
        phrases = cjk.cjk_phrases(text, STOPWORDS)
        if not (phrases or idents):
            return []
        rids, scores = cjk_scores(conn, phrases, impacts() if impacts is not None else None)
        if not idents and not where and k <= MAX_K:
            return scored_rows(conn, _top(rids, scores, k))
        # The scores as a table the statements below read where FTS5's bm25() was.
        conn.execute(_CJK_TABLE)
        conn.execute("DELETE FROM temp.citewise_cjk_scores")
        try:
            conn.executemany(
                "INSERT INTO temp.citewise_cjk_scores VALUES (?, ?)",
                zip(rids.tolist(), scores.tolist(), strict=True),
            )
            if idents:
                return _tiered(conn, _CJK_WORDS, [], idents, where, params, k)
            return conn.execute(
                f"SELECT w.s AS score, {C_CHUNK_COLUMNS} FROM temp.citewise_cjk_scores w "
                f"JOIN chunks c ON c.rid = w.rid "
                f"{'WHERE ' + ' AND '.join(where) if where else ''} "
                "ORDER BY w.s DESC, w.rid LIMIT ?",
                (*params, k),
            ).fetchall()
        finally:
            conn.execute("DELETE FROM temp.citewise_cjk_scores")
    match = fts_query(text)
    if not (match or idents):
        return []
    if impacts is not None and not idents and not where:
        index = impacts()
        rows = impact_rows(index, conn, query_terms(text), k) if index is not None else None
        if rows is not None:
            return rows
    if not idents and not where:
        # Nothing to filter by the chunk's columns: FTS5 takes the top k on its own, so only
        # k rows are joined (the join below reads every matching row's chunk first). Ties
        # go by rowid in both forms, so both give the same rows in the same order.
        return conn.execute(
            f"SELECT t.score, {C_CHUNK_COLUMNS} FROM ("
            "SELECT rowid AS rid, -bm25(chunks_fts) AS score FROM chunks_fts "
            "WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts), rowid LIMIT ?"
            ") t JOIN chunks c ON c.rid = t.rid ORDER BY t.score DESC, t.rid",
            (match, k),
        ).fetchall()
    if not idents:
        # FTS5's bm25() is negated BM25 (more negative = more relevant, so ORDER BY works
        # ascending); flip the sign so every ranker in citewise reads "higher is better".
        return conn.execute(
            f"SELECT -bm25(chunks_fts) AS score, {C_CHUNK_COLUMNS} "
            f"FROM chunks_fts JOIN chunks c ON c.rid = chunks_fts.rowid "
            f"WHERE {' AND '.join(['chunks_fts MATCH ?', *where])} "
            f"ORDER BY bm25(chunks_fts), chunks_fts.rowid LIMIT ?",
            (match, *params, k),
        ).fetchall()
    if not match:
        return _tiered(conn, _NO_WORDS, [], idents, where, params, k)
    words = "SELECT rowid AS rid, -bm25(chunks_fts) AS s FROM chunks_fts WHERE chunks_fts MATCH ?"
    return _tiered(conn, words, [match], idents, where, params, k)


_CJK_TABLE = "CREATE TEMP TABLE IF NOT EXISTS citewise_cjk_scores (rid INTEGER PRIMARY KEY, s REAL)"
_CJK_WORDS = "SELECT rid, s FROM temp.citewise_cjk_scores"
_NO_WORDS = "SELECT NULL AS rid, 0.0 AS s WHERE 0"


def _top(
    rids: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], k: int
) -> list[tuple[int, float]]:
    """The ``k`` best (rid, score), ties by rid (FTS5's ORDER BY bm25, rowid)."""
    order = np.lexsort((rids, -scores))[:k]
    return list(zip(rids[order].tolist(), scores[order].tolist(), strict=True))


def _tiered(
    conn: sqlite3.Connection,
    words: str,
    words_params: list[str],
    idents: list[str],
    where: list[str],
    params: list[object],
    k: int,
) -> list[sqlite3.Row]:
    """The top ``k`` of a query naming identifiers: ``words`` gives each chunk's word (or
    bigram) score ``s``, the identifier index the tiers (``identifiers.tier_scores``)."""
    # One identifier per MATCH: each chunk's count of the query's identifiers sets its tier,
    # and the sum of the single-term scores is the OR query's BM25.
    one_ident = "SELECT rowid AS rid, -bm25(chunks_ident) AS s FROM chunks_ident " + (
        "WHERE chunks_ident MATCH ?"
    )
    sql = f"""
WITH words AS ({words}),
ident AS ({" UNION ALL ".join([one_ident] * len(idents))}),
per AS (SELECT rid, sum(s) AS s, count(*) AS m FROM ident GROUP BY rid),
hits AS (
    SELECT rid, sum(w) AS w, sum(i) AS i, sum(m) AS m FROM (
        SELECT rid, s AS w, 0.0 AS i, 0 AS m FROM words
        UNION ALL SELECT rid, 0.0, s, m FROM per) GROUP BY rid
), kept AS MATERIALIZED (
    SELECT h.rid, h.w, h.i, h.m, {C_CHUNK_COLUMNS} FROM hits h JOIN chunks c ON c.rid = h.rid
    {"WHERE " + " AND ".join(where) if where else ""}
), top AS (SELECT max(w) + max(i) AS t FROM kept)
SELECT w + i + m * t AS score, {CHUNK_COLUMNS}
FROM kept, top ORDER BY score DESC, rid LIMIT ?"""
    quoted = [f'"{term}"' for term in idents]
    return conn.execute(sql, [*words_params, *quoted, *params, k]).fetchall()
