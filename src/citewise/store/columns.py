"""How a chunk is stored as a SQL row, for every SQL engine: its columns, in order, and the
conversion both ways (the heading path as JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence
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
        json.dumps(list(c.heading_path)), c.anchor, c.url, c.page, c.scope, c.page_number,
    )  # fmt: skip


def chunk_from_values(values: Sequence[Any]) -> Chunk:
    """The chunk of row values in :data:`CHUNK_FIELDS` order."""
    fields = dict(zip(CHUNK_FIELDS, values, strict=True))
    fields["heading_path"] = tuple(json.loads(fields["heading_path"]))
    return Chunk(**fields)
