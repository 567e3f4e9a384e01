"""The store protocols: an engine of named knowledge bases, and a handle on one of them.

A store engine (:class:`Store`) holds knowledge bases by name; :meth:`Store.open` gives a
:class:`KBStore`, the narrow handle the service layer works with. A new engine is one module
implementing both, plus one registry entry (``citewise.store.registry``) or an entry point in
the group ``citewise.stores``. The contract suite (``tests/store/test_store_contract.py``) runs
against every registered engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from citewise.models import Chunk, Document, SearchFilter

if TYPE_CHECKING:
    # Only for annotations: importing citewise.embedding would load every embedder module.
    from citewise.embedding.base import Vectors

__all__ = [
    "DocumentUpdate",
    "KBStore",
    "SearchFilter",
    "Store",
    "VectorsLater",
    "vectors_missing",
]


@dataclass(frozen=True)
class DocumentUpdate:
    """The full new state of one document: its chunks, and vectors for the chunks not yet stored.

    ``vectors`` maps chunk id → array of shape ``(n_windows, dim)``; a chunk without an entry
    must already be stored (its id is unchanged, so are its vectors).
    """

    document: Document
    chunks: Sequence[Chunk]
    vectors: Mapping[str, Vectors]


class KBStore(Protocol):
    """One knowledge base in a store: its chunks, their vectors, BM25 index and settings.

    Every write is one transaction: a failure leaves the previous state as it was, and a
    reader never sees a mix. Reads notice a change made by another process (or another
    handle) to the same knowledge base. Reads and writes of a knowledge base dropped since
    it was opened raise KnowledgeBaseError (and never re-create it); a handle names its
    knowledge base, so once one of that name is created again the handle works on it.
    """

    name: str

    def apply(
        self,
        updates: Sequence[DocumentUpdate] = (),
        removed_doc_ids: Sequence[str] = (),
        meta: Mapping[str, str] | None = None,
    ) -> None:
        """Replace the listed documents' chunks and delete the removed documents, atomically.

        Per update: the document row is upserted, its stored chunks missing from ``chunks``
        are deleted, new chunks are inserted with their vectors. A chunk id already stored
        keeps its vectors (any given for it are ignored). A new chunk without vectors raises
        ValueError before anything is written. Removals run after the updates (an unknown
        doc id is ignored); ``meta`` is merged into the settings in the same transaction
        (keys starting with ``_`` are reserved: ValueError).
        """
        ...

    def dense(
        self, vector: Vectors, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        """The k chunks whose best window is nearest to ``vector`` by cosine, best first.

        Exact, or approximate in engines with an index above a size threshold (PostgreSQL's
        HNSW); the filter applies before the top k is taken.
        ``[]`` while nothing is stored; ValueError if ``vector``'s dimension differs from
        the stored vectors'.
        """
        ...

    def keyword(
        self, text: str, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        """The k best BM25 matches for ``text`` (scores positive, higher is better), best first.

        ``text`` is free text, never query syntax: any string is safe. The filter applies
        before the top k is taken.
        """
        ...

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked (missing ids are skipped)."""
        ...

    def neighbours(self, chunk_id: str, n: int) -> list[Chunk]:
        """Up to n chunks either side of ``chunk_id`` in the same document, in document order.

        The chunk itself is included (so the result is a contiguous window); ``[]`` if unknown.
        """
        ...

    def documents(self) -> list[Document]:
        """Every stored document, by doc id."""
        ...

    def chunk_ids(self) -> set[str]:
        """Ids of every stored chunk (to skip re-embedding unchanged chunks)."""
        ...

    def meta(self) -> dict[str, str]:
        """The knowledge base's settings (embedder, site URL, version, scopes, defaults)."""
        ...


@runtime_checkable
class VectorsLater(KBStore, Protocol):
    """A knowledge base that can hold chunks before their vectors (SQLite): written text
    first, searchable by keywords at once, its vectors filled in batch by batch.

    Dense search only ever sees chunks that have vectors; while some are missing, search
    is keyword-only (``retrieval.pipeline.while_embedding``). An engine without this
    capability gets the whole ingest as before: embedded, then written.
    """

    def apply(
        self,
        updates: Sequence[DocumentUpdate] = (),
        removed_doc_ids: Sequence[str] = (),
        meta: Mapping[str, str] | None = None,
        *,
        vectors_later: bool = False,
    ) -> None:
        """``KBStore.apply``; with ``vectors_later``, new chunks may come without vectors."""
        ...

    def without_vectors(self, limit: int) -> list[Chunk]:
        """Up to ``limit`` stored chunks without vectors, in a stable order."""
        ...

    def fill_vectors(self, vectors: Mapping[str, Vectors]) -> int:
        """Store vectors of chunks still without them (one transaction); how many remain."""
        ...

    def vectors_missing(self) -> int:
        """How many stored chunks have no vectors yet."""
        ...


def vectors_missing(store: KBStore) -> int:
    """How many of ``store``'s chunks wait for vectors (0 for an engine that never defers)."""
    return store.vectors_missing() if isinstance(store, VectorsLater) else 0


class Store(Protocol):
    """A storage engine holding knowledge bases by name.

    Every method taking a name validates it first: 1-64 of ``a-z 0-9 . _ -``, starting with
    a letter or digit (else ConfigurationError). Only :meth:`create` makes a knowledge base.
    """

    def open(self, kb: str) -> KBStore:
        """A handle on the knowledge base ``kb`` (KnowledgeBaseError if there is none)."""
        ...

    def create(self, kb: str, meta: Mapping[str, str] | None = None) -> KBStore:
        """Create ``kb`` empty if it does not exist, merge ``meta`` into it, and open it.

        Idempotent: an existing knowledge base keeps its content (reserved meta keys, starting
        with ``_``, raise ValueError before anything is created).
        """
        ...

    def rebuild(
        self, kb: str, meta: Mapping[str, str] | None = None
    ) -> AbstractContextManager[KBStore]:
        """A new, empty ``kb`` holding ``meta``, built beside the current one (if any).

        Written through the handle the block gives; when the block ends without an error the
        new knowledge base takes the current one's place in one step, so readers see the old
        one or the new one, never neither and never a part. An error (or a kill) before that
        leaves the current one as it was, and nothing of the new one behind. The caller holds
        ``write_lock(kb)``.
        """
        ...

    def exists(self, kb: str) -> bool:
        """Whether ``kb`` exists (a question, not a check: never raises KnowledgeBaseError)."""
        ...

    def names(self) -> list[str]:
        """Every knowledge base, sorted."""
        ...

    def drop(self, kb: str) -> None:
        """Delete a knowledge base and everything in it (KnowledgeBaseError if unknown)."""
        ...

    def write_lock(self, kb: str) -> AbstractContextManager[None]:
        """Serializes ingests and deletes of ``kb`` across threads and processes.

        Reads never need it. It may be taken before ``kb`` exists (to create it); an engine
        that lives in one process (``memory``) serializes threads only.
        """
        ...

    def close(self) -> None:
        """Release connections; the store and its handles must not be used afterwards."""
        ...
