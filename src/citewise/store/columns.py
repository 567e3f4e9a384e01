"""How a chunk is stored as a SQL row, for every SQL engine: its columns, in order, and the
conversion both ways (the heading path as JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from typing import Any

from citewise.models import Chunk

__all__ = ["CHUNK_FIELDS", "chunk_from_values", "chunk_values"]

CHUNK_FIELDS = (
    "chunk_id", "doc_id", "position", "section_index", "text", "title", "heading_path", "anchor",
    "url", "page", "scope", "page_number",
)  # fmt: skip


def chunk_values(c: Chunk) -> tuple[Any, ...]:
    """The row values of ``c``, in :data:`CHUNK_FIELDS` order."""
    return (
        c.chunk_id, c.doc_id, c.position, c.section_index, c.text, c.title,
        _heading_json(tuple(c.heading_path)), c.anchor, c.url, c.page, c.scope, c.page_number,
    )  # fmt: skip


@lru_cache(maxsize=4096)
def _heading_json(path: tuple[str, ...]) -> str:
    # A document's chunks share a few heading paths: each is encoded once, not per chunk.
    # json.dumps(list(path)), without the encoder object dumps makes per call (a tenth of
    # an apply's Python time at SciFact size, where every path is a new one).
    return "[" + ", ".join(map(encode_basestring_ascii, path)) + "]"


def chunk_from_values(values: Sequence[Any]) -> Chunk:
    """The chunk of row values in :data:`CHUNK_FIELDS` order."""
    # Positional, not a dict of keywords: every search builds a chunk per hit, and this
    # was most of a keyword search's time after the matrix (benchmarks/keyword-impact.md).
    (chunk_id, doc_id, position, section_index, text, title, heading_path, anchor, url, page,
     scope, page_number) = values  # fmt: skip
    return Chunk(
        chunk_id, doc_id, position, section_index, text, title, _heading_path(heading_path),
        anchor, url, page, scope, page_number,
    )  # fmt: skip


@lru_cache(maxsize=4096)
def _heading_path(stored: str) -> tuple[str, ...]:
    # A document's chunks share a few heading paths; the tuple is immutable, so shared.
    return tuple(json.loads(stored))
