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

from citewise.models import SearchFilter
from citewise.store import cjk
from citewise.store.identifiers import identifier_query
from citewise.store.sqlite_impact import ImpactIndex, impact_rows
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


def _words_sql(text: str) -> tuple[str, str]:
    """The word (or CJK bigram) index to search and its MATCH expression ("" if none)."""
    if cjk.has_cjk(text):
        return "chunks_cjk", cjk.cjk_query(text, STOPWORDS)
    return "chunks_fts", fts_query(text)


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
    everything while the matrix is being built).
    """
    table, match = _words_sql(text)
    idents = identifier_query(text)
    if k <= 0 or not (match or idents):
        return []
    where, params = filter_sql(filter)
    if impacts is not None and table == "chunks_fts" and not idents and not where:
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
            f"SELECT rowid AS rid, -bm25({table}) AS score FROM {table} "
            f"WHERE {table} MATCH ? ORDER BY bm25({table}), rowid LIMIT ?"
            f") t JOIN chunks c ON c.rid = t.rid ORDER BY t.score DESC, t.rid",
            (match, k),
        ).fetchall()
    if not idents:
        # FTS5's bm25() is negated BM25 (more negative = more relevant, so ORDER BY works
        # ascending); flip the sign so every ranker in citewise reads "higher is better".
        return conn.execute(
            f"SELECT -bm25({table}) AS score, {C_CHUNK_COLUMNS} "
            f"FROM {table} JOIN chunks c ON c.rid = {table}.rowid "
            f"WHERE {' AND '.join([f'{table} MATCH ?', *where])} "
            f"ORDER BY bm25({table}), {table}.rowid LIMIT ?",
            (match, *params, k),
        ).fetchall()
    # One identifier per MATCH: each chunk's count of the query's identifiers sets its tier,
    # and the sum of the single-term scores is the OR query's BM25.
    words = (
        f"SELECT rowid AS rid, -bm25({table}) AS s FROM {table} WHERE {table} MATCH ?"
        if match
        else "SELECT NULL AS rid, 0.0 AS s WHERE 0"
    )
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
    return conn.execute(sql, ([match] if match else []) + quoted + params + [k]).fetchall()
