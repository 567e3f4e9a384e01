"""Document metadata in the stores: a document's ``author``, ``subject``, ``description``,
``created`` and ``modified`` (what its parser found) as one JSON object per document row.

The SQLite store keeps it in ``documents.metadata`` (schema 4; an older file gains the
column, empty for every document, the first time this citewise opens it, see
:func:`install`); the PostgreSQL store in ``documents.metadata`` jsonb (migration 3).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from citewise.models import Document

__all__ = ["METADATA_KEYS", "document", "from_json", "install", "metadata_json", "metadata_pairs"]

log = logging.getLogger(__name__)

METADATA_KEYS = ("author", "subject", "description", "created", "modified")
"""The keys parsers fill (a pre-parsed document may bring others)."""
MAX_VALUE_CHARS = 500
SQLITE_COLUMN = "ALTER TABLE documents ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'"


def metadata_pairs(values: Mapping[str, object] | None) -> tuple[tuple[str, str], ...]:
    """``values`` as sorted ``(key, text)`` pairs: empty values dropped, text bounded."""
    pairs = {
        str(key).strip(): " ".join(str(value).split())[:MAX_VALUE_CHARS]
        for key, value in (values or {}).items()
        if value is not None and str(value).strip() and str(key).strip()
    }
    return tuple(sorted(pairs.items()))


def metadata_json(pairs: tuple[tuple[str, str], ...]) -> str:
    if not pairs:  # most documents: no encoder made for nothing
        return "{}"
    return json.dumps(dict(pairs), ensure_ascii=False, separators=(",", ":"))


def from_json(text: object) -> tuple[tuple[str, str], ...]:
    """Stored metadata (JSON text, or a mapping from jsonb) as pairs; damage reads as none."""
    if isinstance(text, Mapping):
        return metadata_pairs(text)
    try:
        values = json.loads(str(text or "{}"))
    except ValueError:
        return ()
    return metadata_pairs(values) if isinstance(values, dict) else ()


def document(row: Sequence[Any]) -> Document:
    """A ``documents`` row (doc_id, title, url, page, content_hash, scope, metadata)."""
    doc_id, title, url, page, content_hash, scope, metadata = row
    return Document(doc_id, title, url, page, content_hash, scope, from_json(metadata))


def install(
    conn: sqlite3.Connection, kb: str, on_upgrade: Callable[[sqlite3.Connection], None]
) -> None:
    """Add ``documents.metadata`` to a file that predates it, in one transaction (in place:
    the documents keep everything else, with no metadata until re-indexed)."""
    if _has_column(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _has_column(conn):  # another process may have upgraded it meanwhile
            log.warning("knowledge base %r predates document metadata: adding the column", kb)
            conn.execute(SQLITE_COLUMN)
            on_upgrade(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _has_column(conn: sqlite3.Connection) -> bool:
    return any(row[1] == "metadata" for row in conn.execute("PRAGMA table_info(documents)"))
