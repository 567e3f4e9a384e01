"""Checks every store engine makes the same way: knowledge base names, meta keys and updates.

Sharing them keeps the engines' errors identical, so the contract suite can assert one message.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from citewise.errors import ConfigurationError, KnowledgeBaseError
from citewise.store.base import DocumentUpdate
from citewise.store.dense import as_windows

__all__ = ["KB_NAME", "check_meta", "check_name", "check_updates", "unknown_kb"]

# Dots allow release names such as ``langgraph-openai-serve-0.12.0``; the first character
# can never be one, so a name cannot be hidden or a relative path (it names files on disk).
KB_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def check_name(kb: str) -> str:
    """``kb`` itself if it is a valid knowledge base name, else ConfigurationError."""
    if not isinstance(kb, str) or not KB_NAME.fullmatch(kb):
        raise ConfigurationError(
            f"invalid knowledge base name {kb!r}: use 1-64 of a-z, 0-9, '.', '_' and '-', "
            "starting with a letter or digit"
        )
    return kb


def unknown_kb(kb: str, known: Iterable[str]) -> KnowledgeBaseError:
    names = ", ".join(known) or "none"
    return KnowledgeBaseError(f"unknown knowledge base {kb!r} (known: {names})")


def check_meta(meta: Mapping[str, str] | None) -> None:
    reserved = [key for key in meta or {} if key.startswith("_")]
    if reserved:
        raise ValueError(f"meta keys starting with '_' are reserved: {reserved}")


def check_updates(
    updates: Sequence[DocumentUpdate],
    stored: Collection[str],
    dim: int | None,
    *,
    vectors_later: bool = False,
) -> int | None:
    """Validate every update before the first write; returns the vector dimension.

    ``stored`` holds the ids of the chunks already stored, ``dim`` the dimension of their
    vectors (None while there are none). With ``vectors_later`` a new chunk may come
    without vectors (they are filled in later: ``store/sqlite_deferred.py``).
    """
    seen: set[str] = set()
    for update in updates:
        doc_id = update.document.doc_id
        for chunk in update.chunks:
            if chunk.doc_id != doc_id:
                raise ValueError(
                    f"chunk {chunk.chunk_id} belongs to {chunk.doc_id!r}, not {doc_id!r}"
                )
            if chunk.chunk_id in seen:
                raise ValueError(f"chunk id {chunk.chunk_id} appears twice")
            seen.add(chunk.chunk_id)
            if chunk.chunk_id in stored:
                continue
            if chunk.chunk_id not in update.vectors:
                if vectors_later:
                    continue
                raise ValueError(f"new chunk {chunk.chunk_id} of {doc_id!r} has no vectors")
            width = as_windows(update.vectors[chunk.chunk_id]).shape[1]
            if dim is not None and width != dim:
                raise ValueError(f"chunk {chunk.chunk_id}: vector dim {width}, index has {dim}")
            dim = width
    return dim
