"""The SQLite store's file: schema and creation, column mapping, filters as SQL, FTS5 queries."""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

from citewise.errors import StorageError
from citewise.models import Chunk, SearchFilter
from citewise.store import cjk
from citewise.store.columns import CHUNK_FIELDS, chunk_from_values
from citewise.store.identifiers import FTS5_TOKENIZER, identifier_text
from citewise.store.text import query_terms

# 2 added the CJK bigram index (chunks_cjk), 3 the identifier index (chunks_ident), 4 the
# documents' metadata, 5 made the bigram index external-content (no second copy of every
# text: store/cjk.py), 6 keeps in it only the chunks whose bigram form is not their text
# (store/cjk_bm25.py scores it as an index of every chunk); an older file gains what it
# lacks when first opened (sqlite_keyword.install, doc_metadata.install).
SCHEMA_VERSION = "6"
IDENT_FUNCTION = "citewise_identifiers"
# Triggers call identifier_text() (registered on every connection), so no code path can
# change a chunk and leave its identifier entry behind. The anchor counts: an API entry is
# anchored at its qualified name (``requests.Session.mount``), which its text may not spell.
IDENT_STATEMENTS = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_ident USING fts5("
    f'idents, tokenize="{FTS5_TOKENIZER}")',
    f"""CREATE TRIGGER IF NOT EXISTS chunks_ident_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_ident (rowid, idents)
    VALUES (new.rid, {IDENT_FUNCTION}(new.text, new.anchor));
END""",
    """CREATE TRIGGER IF NOT EXISTS chunks_ident_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_ident WHERE rowid = old.rid;
END""",
    f"""CREATE TRIGGER IF NOT EXISTS chunks_ident_au AFTER UPDATE OF text, anchor ON chunks
WHEN old.text IS NOT new.text OR old.anchor IS NOT new.anchor BEGIN
    UPDATE chunks_ident SET idents = {IDENT_FUNCTION}(new.text, new.anchor)
    WHERE rowid = new.rid;
END""",
)
IDENT_SCHEMA = ";\n".join(IDENT_STATEMENTS) + ";\n"

# Meta keys starting with "_" belong to the store (schema, generation, vector dim), not to callers.
GENERATION_KEY = "_generation"
# Bumped by writes that may change chunk text (every write but a vector fill): the keyword
# index's matrix is keyed by it, so filling vectors in does not make it stale.
TEXT_GENERATION_KEY = "_text_generation"
DIM_KEY = "_dim"

SCHEMA = (
    """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    doc_id TEXT PRIMARY KEY, title TEXT NOT NULL, url TEXT NOT NULL, page TEXT NOT NULL,
    content_hash TEXT NOT NULL, scope TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '{}'
);
-- rid is the stable integer key the FTS5 index and the dense cache refer to.
CREATE TABLE chunks (
    rid INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL,
    position INTEGER NOT NULL, section_index INTEGER NOT NULL, text TEXT NOT NULL,
    title TEXT NOT NULL, heading_path TEXT NOT NULL, anchor TEXT NOT NULL, url TEXT NOT NULL,
    page TEXT NOT NULL, scope TEXT NOT NULL, page_number INTEGER
);
CREATE INDEX chunks_doc ON chunks (doc_id, position);
CREATE TABLE vectors (
    chunk_id TEXT NOT NULL, window INTEGER NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (chunk_id, window)
);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    text, content='chunks', content_rowid='rid',
    tokenize='porter unicode61 remove_diacritics 2'
);
-- Triggers keep the external-content FTS index and the vectors in step with chunks, so no
-- code path can delete a chunk and leave its BM25 entry or vectors behind.
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, text) VALUES (new.rid, new.text);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.rid, old.text);
    DELETE FROM vectors WHERE chunk_id = old.chunk_id;
END;
CREATE TRIGGER chunks_au AFTER UPDATE OF text ON chunks WHEN old.text IS NOT new.text BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.rid, old.text);
    INSERT INTO chunks_fts (rowid, text) VALUES (new.rid, new.text);
END;
"""
    + cjk.CJK_SCHEMA
    + IDENT_SCHEMA
)


def register_functions(conn: sqlite3.Connection) -> None:
    """Register the functions the triggers call, on every connection that may write chunks."""
    conn.create_function(cjk.GRAMS_FUNCTION, 1, cjk.cjk_grams, deterministic=True)
    conn.create_function(IDENT_FUNCTION, 2, identifier_text, deterministic=True)


def is_storage_failure(error: sqlite3.Error) -> bool:
    """A full disk (SQLITE_FULL) or a failed write (SQLITE_IOERR, e.g. a file-size limit),
    by SQLite's own result code when the error carries one."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR)
    text = str(error).lower()
    return "disk is full" in text or "disk i/o error" in text


def text_generation(conn: sqlite3.Connection) -> str:
    """The generation of the knowledge base's text, for caches built from it alone.

    A file written before the text key existed (or never written since) has none: its whole
    generation stands in. The prefixes keep the two counters' values from ever naming the
    same cache.
    """
    row = conn.execute(
        "SELECT key, value FROM meta WHERE key IN (?, ?) ORDER BY key = ? DESC LIMIT 1",
        (TEXT_GENERATION_KEY, GENERATION_KEY, TEXT_GENERATION_KEY),
    ).fetchone()
    return ("t" if row[0] == TEXT_GENERATION_KEY else "g") + str(row[1])


def bump_text_generation(conn: sqlite3.Connection) -> None:
    """Mark the text changed (inside the caller's write); a random start, as the generation's."""
    conn.execute(
        "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
        "value = CAST(value AS INTEGER) + 1",
        (TEXT_GENERATION_KEY, str(secrets.randbits(62))),
    )


def create_database(path: Path) -> None:
    """Create an empty knowledge base file at ``path`` unless one is there already."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Build the schema in a temporary file and link it into place, so nobody ever opens a
    # half-created knowledge base and two creators cannot clobber each other.
    tmp = path.parent / f".{path.stem}.{uuid.uuid4().hex}.tmp"
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            register_functions(conn)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(f"BEGIN; {SCHEMA} COMMIT;")
            conn.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                # A random start, so a dropped and recreated knowledge base never reuses a
                # generation another process may have cached.
                [("_schema", SCHEMA_VERSION), (GENERATION_KEY, str(secrets.randbits(62)))],
            )
        finally:
            conn.close()
    except sqlite3.Error as error:
        # A failed create leaves nothing behind, not even the temporary file.
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
        if is_storage_failure(error):
            raise StorageError(f"cannot create {path.name} ({error}: is the disk full?)") from error
        raise
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()


CHUNK_COLUMNS = ", ".join(CHUNK_FIELDS)
C_CHUNK_COLUMNS = ", ".join("c." + col for col in CHUNK_COLUMNS.split(", "))
_REFRESH = """ON CONFLICT (chunk_id) DO UPDATE SET
    doc_id = excluded.doc_id, position = excluded.position,
    section_index = excluded.section_index, text = excluded.text, title = excluded.title,
    heading_path = excluded.heading_path, anchor = excluded.anchor, url = excluded.url,
    page = excluded.page, scope = excluded.scope, page_number = excluded.page_number"""
# An apply writes its chunks a statement of many rows at a time: the indexes' triggers then
# run inside one statement, where one statement per chunk made FTS5 flush its pending terms
# to disk at every chunk's savepoint (half the keyword indexes' write time at SciFact size:
# benchmarks/peers.md). The rows go in as the statement's parameters, not through a staging
# table written and read back first (a tenth of a build's chunk write).
_ROW_PLACEHOLDERS = "(" + ", ".join("?" * len(CHUNK_FIELDS)) + ")"


@lru_cache(maxsize=8)
def upsert_chunks(rows: int) -> str:
    """The statement writing ``rows`` chunks in their order (their rowids follow it)."""
    values = ", ".join([_ROW_PLACEHOLDERS] * rows)
    return f"INSERT INTO chunks ({CHUNK_COLUMNS}) VALUES {values}\n{_REFRESH}"


def rows_per_statement(conn: sqlite3.Connection, most: int, columns: int) -> int:
    """How many rows of ``columns`` values one statement may write: ``most``, within the
    build's parameter limit (32,766 since SQLite 3.32, 999 before)."""
    limit = conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    return max(1, min(most, limit // columns))


def write_rows(
    conn: sqlite3.Connection,
    statement: Callable[[int], str],
    rows: Sequence[Sequence[object]],
    most: int,
) -> None:
    """Write ``rows`` in order with ``statement(n)``, the statement of ``n`` rows, at most
    ``most`` rows a statement (:func:`rows_per_statement`)."""
    if not rows:
        return
    per = rows_per_statement(conn, most, len(rows[0]))
    for start in range(0, len(rows), per):
        part = rows[start : start + per]
        conn.execute(statement(len(part)), [value for row in part for value in row])


@lru_cache(maxsize=8)
def insert_vectors(rows: int) -> str:
    """The statement writing ``rows`` window vectors, (chunk_id, window, vector) each."""
    return "INSERT INTO vectors VALUES " + ", ".join(["(?, ?, ?)"] * rows)


def fts_query(text: str) -> str:
    """A safe FTS5 MATCH expression for free text: quoted terms joined by OR ("" if none).

    Quoting makes every term a literal string, so user punctuation and words like AND, NOT
    or NEAR never reach the FTS5 query parser as syntax. OR (not AND) lets BM25 rank
    documents that match more, and rarer, terms higher instead of requiring all of them.
    """
    return " OR ".join(f'"{term}"' for term in query_terms(text))


def row_to_chunk(row: sqlite3.Row) -> Chunk:
    return chunk_from_values([row[name] for name in CHUNK_FIELDS])


def filter_sql(f: SearchFilter | None) -> tuple[list[str], list[object]]:
    """WHERE conditions (on chunks aliased ``c``) and their parameters for a search filter."""
    where: list[str] = []
    params: list[object] = []
    if f is None:
        return where, params
    if f.scope is not None:
        # A chunk's scope is a space-separated list: match one member exactly.
        where.append("(c.scope = ? OR instr(' ' || c.scope || ' ', ?) > 0)")
        params += [f.scope, f" {f.scope} "]
    if f.page_prefix:
        # substr, not LIKE: LIKE is case-insensitive and treats % and _ as wildcards.
        where.append("substr(c.page, 1, ?) = ?")
        params += [len(f.page_prefix), f.page_prefix]
    if f.doc_ids is not None:
        where.append("c.doc_id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(list(f.doc_ids)))
    return where, params
