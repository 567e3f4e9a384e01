"""Chunks stored before their vectors (SQLite): the count of those still without vectors,
kept in the same transactions that change it, and the statements that fill them in.

A knowledge base written text first (``SQLiteKB.apply(..., vectors_later=True)``) answers
keyword searches at once; its vectors come later, batch by batch (``SQLiteKB.fill_vectors``),
each batch its own transaction, so a crash loses only the batch being embedded and a
restart embeds just the chunks still without vectors (``SQLiteKB.without_vectors``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING

from citewise.store.dense import as_windows
from citewise.store.sqlite_schema import CHUNK_COLUMNS, DIM_KEY

if TYPE_CHECKING:
    from citewise.embedding.base import Vectors

__all__ = ["MISSING_KEY", "fill", "missing", "recount", "without_vectors"]

# Store-reserved meta key: how many stored chunks have no vectors yet (absent: none).
MISSING_KEY = "_vectors_missing"

_WITHOUT = "FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.chunk_id)"


def recount(conn: sqlite3.Connection) -> int:
    """Count the chunks without vectors and record it (inside the caller's write)."""
    count = int(conn.execute(f"SELECT count(*) {_WITHOUT}").fetchone()[0])
    if count:
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (MISSING_KEY, str(count)))
    else:
        conn.execute("DELETE FROM meta WHERE key = ?", (MISSING_KEY,))
    return count


def missing(conn: sqlite3.Connection) -> int:
    """The recorded count of chunks without vectors (one row read: cheap for every search)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (MISSING_KEY,)).fetchone()
    return int(row[0]) if row is not None else 0


def without_vectors(conn: sqlite3.Connection, limit: int) -> list[sqlite3.Row]:
    """Up to ``limit`` chunks without vectors, in storage order (their column values)."""
    return conn.execute(
        f"SELECT {', '.join('c.' + c for c in CHUNK_COLUMNS.split(', '))} {_WITHOUT} "
        "ORDER BY c.rid LIMIT ?",
        (limit,),
    ).fetchall()


def fill(conn: sqlite3.Connection, vectors: Mapping[str, Vectors]) -> int:
    """Store ``vectors`` for chunks that are stored and still without any (others ignored:
    a chunk deleted meanwhile, or filled by another writer); returns how many remain.

    Every dimension is checked against the stored one before anything is written.

    Raises:
        ValueError: a vector of another dimension than the knowledge base's.
    """
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (DIM_KEY,)).fetchone()
    dim = int(row[0]) if row is not None else None
    windows = {chunk_id: as_windows(v) for chunk_id, v in vectors.items()}
    for chunk_id, rows in windows.items():
        if dim is not None and rows.shape[1] != dim:
            raise ValueError(f"chunk {chunk_id}: vector dim {rows.shape[1]}, index has {dim}")
        dim = rows.shape[1]
    wanted = {
        r[0]
        for r in conn.execute(
            f"SELECT c.chunk_id {_WITHOUT} AND c.chunk_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(windows)),),
        )
    }
    rows_out = [
        (chunk_id, i, w.tobytes())
        for chunk_id, rows in windows.items()
        if chunk_id in wanted
        for i, w in enumerate(rows)
    ]
    conn.executemany("INSERT INTO vectors VALUES (?, ?, ?)", rows_out)
    if rows_out:
        conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (DIM_KEY, str(dim)))
    return recount(conn)
