"""The SQLite store's schema, column mapping and the safe FTS5 query built from free text."""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from typing import Any

from citewise.models import Chunk
from citewise.store import cjk

# 2 added the CJK bigram index (chunks_cjk); a version-1 file gains it when first opened.
SCHEMA_VERSION = "2"
# Meta keys starting with "_" belong to the store (schema, generation, vector dim), not to callers.
GENERATION_KEY = "_generation"
DIM_KEY = "_dim"

SCHEMA = (
    """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    doc_id TEXT PRIMARY KEY, title TEXT NOT NULL, url TEXT NOT NULL, page TEXT NOT NULL,
    content_hash TEXT NOT NULL, scope TEXT NOT NULL
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
)

CHUNK_COLUMNS = (
    "chunk_id, doc_id, position, section_index, text, title, heading_path, anchor, url, page, "
    "scope, page_number"
)
C_CHUNK_COLUMNS = ", ".join("c." + col for col in CHUNK_COLUMNS.split(", "))
UPSERT_CHUNK = f"""
INSERT INTO chunks ({CHUNK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (chunk_id) DO UPDATE SET
    doc_id = excluded.doc_id, position = excluded.position,
    section_index = excluded.section_index, text = excluded.text, title = excluded.title,
    heading_path = excluded.heading_path, anchor = excluded.anchor, url = excluded.url,
    page = excluded.page, scope = excluded.scope, page_number = excluded.page_number
"""

STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from has have how i if in into is it its "
    "me my of on or so than that the their then there these this to was what when where which "
    "who why will with you your s t".split()
)
_MAX_TERMS = 64
# Letters and digits only: the unicode61 tokenizer treats "_" and punctuation as separators.
_WORD = re.compile(r"[^\W_]+")


def fts_query(text: str) -> str:
    """A safe FTS5 MATCH expression for free text: quoted terms joined by OR ("" if none).

    Quoting makes every term a literal string, so user punctuation and words like AND, NOT
    or NEAR never reach the FTS5 query parser as syntax. OR (not AND) lets BM25 rank
    documents that match more, and rarer, terms higher instead of requiring all of them.
    """
    words = _WORD.findall(unicodedata.normalize("NFKC", text).lower())
    content = [w for w in words if w not in STOPWORDS]
    terms = list(dict.fromkeys(content or words))[:_MAX_TERMS]
    return " OR ".join(f'"{term}"' for term in terms)


def row_to_chunk(row: sqlite3.Row) -> Chunk:
    fields = {name: row[name] for name in CHUNK_COLUMNS.split(", ")}
    fields["heading_path"] = tuple(json.loads(fields["heading_path"]))
    return Chunk(**fields)


def chunk_params(c: Chunk) -> tuple[Any, ...]:
    return (
        c.chunk_id, c.doc_id, c.position, c.section_index, c.text, c.title,
        json.dumps(list(c.heading_path)), c.anchor, c.url, c.page, c.scope, c.page_number,
    )  # fmt: skip
