"""The Store protocol: where chunks, their vectors and their BM25 index live."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from citewise.embedding.base import Vectors
from citewise.models import Chunk, Document


@dataclass(frozen=True)
class SearchFilter:
    """Restricts a search to part of a knowledge base; ``None`` fields do not filter.

    ``scope`` matches a chunk whose scope is a space-separated list containing it (a chunk of
    ``tutorials/`` may be in ``tutorials library``), or equals it exactly; ``page_prefix``
    matches the start of its page path.
    """

    scope: str | None = None
    page_prefix: str | None = None
    doc_ids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class DocumentUpdate:
    """The full new state of one document: its chunks, and vectors for the chunks not yet stored.

    ``vectors`` maps chunk id → array of shape ``(n_windows, dim)``; a chunk without an entry
    must already be stored (its id is unchanged, so are its vectors).
    """

    document: Document
    chunks: Sequence[Chunk]
    vectors: Mapping[str, Vectors]


class Store(Protocol):
    """Persistence and first-stage search for knowledge bases.

    Every write is one transaction: a failure leaves the previous index as it was.
    Writes (``create``, ``apply``, ``upsert``, ``set_meta``) create an unknown knowledge base;
    reads, ``delete_document`` and ``drop`` raise KnowledgeBaseError for one. An invalid
    knowledge base name raises ConfigurationError.
    """

    def create(self, kb: str, meta: Mapping[str, str] | None = None) -> None:
        """Create an empty knowledge base if it does not exist, then merge ``meta`` into it."""
        ...

    def apply(
        self,
        kb: str,
        updates: Sequence[DocumentUpdate],
        removed_doc_ids: Sequence[str] = (),
        meta: Mapping[str, str] | None = None,
    ) -> None:
        """Replace the listed documents' chunks and delete the removed documents, atomically.

        Per update: the document row is upserted, its stored chunks missing from ``chunks``
        are deleted, new chunks are inserted with their vectors. A chunk id already stored
        keeps its vectors (any given for it are ignored). A new chunk without vectors raises
        ValueError before anything is written. Removals run after the updates; ``meta``
        is merged (as by ``set_meta``) in the same transaction.
        """
        ...

    def upsert(self, kb: str, chunks: Sequence[Chunk], vectors: Mapping[str, Vectors]) -> None:
        """Insert or replace chunks (and their vectors) without touching other chunks.

        A stored chunk without an entry in ``vectors`` keeps its stored vectors.
        """
        ...

    def delete_document(self, kb: str, doc_id: str) -> int:
        """Delete a document and all its chunks; returns how many chunks went (0 if absent)."""
        ...

    def dense(
        self, kb: str, vector: Vectors, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        """The k chunks whose best window is nearest to ``vector`` by cosine, best first."""
        ...

    def keyword(
        self, kb: str, text: str, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        """The k best BM25 matches for ``text`` (higher score is better), best first."""
        ...

    def get(self, kb: str, ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked (missing ids are skipped)."""
        ...

    def neighbours(self, kb: str, chunk_id: str, n: int) -> list[Chunk]:
        """Up to n chunks either side of ``chunk_id`` in the same document, in document order.

        The chunk itself is included (so the result is a contiguous window); ``[]`` if unknown.
        """
        ...

    def documents(self, kb: str) -> list[Document]:
        """Every stored document."""
        ...

    def chunk_ids(self, kb: str) -> set[str]:
        """Ids of every stored chunk (to skip re-embedding unchanged chunks)."""
        ...

    def get_meta(self, kb: str) -> dict[str, str]:
        """The knowledge base's settings (embedder id, site URL, version, source)."""
        ...

    def set_meta(self, kb: str, meta: Mapping[str, str]) -> None:
        """Merge ``meta`` into the settings; keys starting with ``_`` are reserved (ValueError)."""
        ...

    def exists(self, kb: str) -> bool: ...

    def list_kbs(self) -> list[str]: ...

    def drop(self, kb: str) -> None:
        """Delete a knowledge base entirely."""
        ...

    def close(self) -> None:
        """Release connections; the store must not be used afterwards."""
        ...
