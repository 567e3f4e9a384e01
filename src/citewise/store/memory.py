"""A store kept in process memory (``memory://``): for tests, demos and as a second engine.

Plain Python and numpy: exact cosine over each chunk's windows and a small BM25 (k1 1.2,
b 0.75) over lowercase words with diacritics folded, a plural-stripping stemmer, stop words
dropped from queries and CJK runs split into bigrams as the SQLite store does; identifiers
as whole terms in a second index, tiered as every store does (``store/identifiers.py``). Every write
builds a new immutable state and swaps it in, so a reader holding the old one sees no mix.
"""

from __future__ import annotations

import math
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from citewise.models import Chunk, Document, SearchFilter
from citewise.store.base import DocumentUpdate
from citewise.store.checks import check_meta, check_name, check_updates, unknown_kb
from citewise.store.cjk import cjk_grams
from citewise.store.dense import DenseIndex, as_windows, build_index, matches
from citewise.store.identifiers import document_identifiers, identifier_query, tier_scores
from citewise.store.text import MAX_TERMS, STOPWORDS, WORD

if TYPE_CHECKING:
    from citewise.embedding.base import Vectors

__all__ = ["MemoryKB", "MemoryStore", "from_url"]

K1 = 1.2
B = 0.75

_NAMED: dict[str, MemoryStore] = {}
_NAMED_GUARD = threading.Lock()


def from_url(url: str, home: Path) -> MemoryStore:
    """The process-wide store ``memory://name`` names (``memory://``: the unnamed one).

    Opening the same URL twice gives the same store, so both openings see the same data.
    """
    _, _, name = url.partition("://")
    with _NAMED_GUARD:
        return _NAMED.setdefault(name, MemoryStore())


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", bare)


def _stem(word: str) -> str:
    """Harman's S-stemmer: plural endings only (``keys`` → ``key``, ``queries`` → ``query``)."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


def _words(text: str) -> list[str]:
    return [_fold(w) for w in WORD.findall(cjk_grams(text).lower())]


def _query_terms(text: str) -> list[str]:
    found = _words(text)
    content = [w for w in found if w not in STOPWORDS]
    return list(dict.fromkeys(_stem(w) for w in content or found))[:MAX_TERMS]


@dataclass(frozen=True, eq=False)
class _State:
    """One version of a knowledge base, never changed once built (a write makes the next)."""

    meta: Mapping[str, str] = field(default_factory=dict)
    documents: Mapping[str, Document] = field(default_factory=dict)
    chunks: Mapping[str, Chunk] = field(default_factory=dict)
    vectors: Mapping[str, Vectors] = field(default_factory=dict)
    terms: Mapping[str, Counter[str]] = field(default_factory=dict)
    dim: int | None = None
    idents: Mapping[str, Counter[str]] = field(default_factory=dict)

    @cached_property
    def dense_index(self) -> tuple[DenseIndex | None, list[str]]:
        ids = [cid for cid in self.chunks if cid in self.vectors]
        chunks = [self.chunks[cid] for cid in ids]
        windows = [self.vectors[cid] for cid in ids]
        filters = [(c.scope, c.page, c.doc_id) for c in chunks]
        # The state never changes, so the index needs no generation: rids are list positions.
        return build_index("", range(len(ids)), windows, filters), ids

    @cached_property
    def document_frequency(self) -> tuple[Counter[str], float]:
        """How many chunks hold each term, and the mean chunk length in terms."""
        return _frequencies(self.terms)

    @cached_property
    def identifier_frequency(self) -> tuple[Counter[str], float]:
        return _frequencies(self.idents)

    def applied(
        self,
        updates: Sequence[DocumentUpdate],
        removed_doc_ids: Sequence[str],
        meta: Mapping[str, str] | None,
    ) -> _State:
        """The next state; raises (and changes nothing) if any update is invalid."""
        check_meta(meta)
        dim = check_updates(updates, self.chunks, self.dim)
        documents, chunks = dict(self.documents), dict(self.chunks)
        vectors, terms, idents = dict(self.vectors), dict(self.terms), dict(self.idents)

        def forget(chunk_id: str) -> None:
            del chunks[chunk_id]
            vectors.pop(chunk_id, None)
            terms.pop(chunk_id, None)
            idents.pop(chunk_id, None)

        for update in updates:
            doc_id = update.document.doc_id
            documents[doc_id] = update.document
            keep = {c.chunk_id for c in update.chunks}
            for gone in [cid for cid, c in chunks.items() if c.doc_id == doc_id]:
                if gone not in keep:
                    forget(gone)
            for c in update.chunks:
                old = chunks.get(c.chunk_id)
                chunks[c.chunk_id] = c
                if old is None or old.text != c.text:
                    terms[c.chunk_id] = Counter(_stem(w) for w in _words(c.text))
                if old is None or (old.text, old.anchor) != (c.text, c.anchor):
                    idents[c.chunk_id] = Counter(document_identifiers(c.text, c.anchor))
                if c.chunk_id not in self.chunks:
                    vectors[c.chunk_id] = as_windows(update.vectors[c.chunk_id]).copy()
        for doc_id in removed_doc_ids:
            documents.pop(doc_id, None)
            for gone in [cid for cid, c in chunks.items() if c.doc_id == doc_id]:
                forget(gone)
        merged = {**self.meta, **{k: str(v) for k, v in (meta or {}).items()}}
        return _State(merged, documents, chunks, vectors, terms, dim, idents)


def _frequencies(index: Mapping[str, Counter[str]]) -> tuple[Counter[str], float]:
    """How many chunks of ``index`` hold each term, and the mean chunk length in terms."""
    df: Counter[str] = Counter()
    for counts in index.values():
        df.update(counts.keys())
    total = sum(counts.total() for counts in index.values())
    return df, total / max(len(index), 1)


def _bm25(
    index: Mapping[str, Counter[str]], frequency: tuple[Counter[str], float], query: list[str]
) -> dict[str, tuple[float, int]]:
    """Each chunk of ``index`` holding a query term: its BM25 and how many terms it holds."""
    df, mean_length = frequency
    n = len(index)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in query if df[t]}
    found: dict[str, tuple[float, int]] = {}
    for chunk_id, counts in index.items():
        held = [t for t in idf if t in counts]
        if not held:
            continue
        norm = K1 * (1 - B + B * counts.total() / mean_length)
        score = sum(idf[t] * counts[t] * (K1 + 1) / (counts[t] + norm) for t in held)
        found[chunk_id] = (score, len(held))
    return found


class MemoryStore:
    """Knowledge bases in a dict of this process; gone when the process ends."""

    def __init__(self) -> None:
        self._kbs: dict[str, _State] = {}
        # Held to change _kbs (one writer at a time builds the next state); reentrant as a
        # failing drop or write lists the names for its error.
        self._lock = threading.RLock()
        self._write_locks: dict[str, threading.Lock] = {}

    def open(self, kb: str) -> MemoryKB:
        self._state(kb)
        return MemoryKB(self, kb)

    def create(self, kb: str, meta: Mapping[str, str] | None = None) -> MemoryKB:
        check_name(kb)
        check_meta(meta)
        with self._lock:
            self._kbs.setdefault(kb, _State())
        handle = MemoryKB(self, kb)
        if meta:
            handle.apply(meta=meta)
        return handle

    @contextmanager
    def rebuild(self, kb: str, meta: Mapping[str, str] | None = None) -> Iterator[MemoryKB]:
        """A new ``kb`` built in a store of its own; its state replaces the current one's
        once the block ends without an error."""
        check_name(kb)
        staging = MemoryStore()
        yield staging.create(kb, meta)
        with self._lock:
            self._kbs[kb] = staging._kbs[kb]

    def exists(self, kb: str) -> bool:
        return check_name(kb) in self._kbs

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._kbs)

    def drop(self, kb: str) -> None:
        with self._lock:
            self._state(kb)
            del self._kbs[kb]

    def write_lock(self, kb: str) -> AbstractContextManager[None]:
        check_name(kb)
        with self._lock:
            lock = self._write_locks.setdefault(kb, threading.Lock())
        return _holding(lock)

    def close(self) -> None:
        """Nothing to release: the data stays for every other opening of the same URL."""

    def _state(self, kb: str) -> _State:
        state = self._kbs.get(check_name(kb))
        if state is None:
            raise unknown_kb(kb, self.names())
        return state

    def _apply(
        self,
        kb: str,
        updates: Sequence[DocumentUpdate],
        removed_doc_ids: Sequence[str],
        meta: Mapping[str, str] | None,
    ) -> None:
        with self._lock:
            self._kbs[kb] = self._state(kb).applied(updates, removed_doc_ids, meta)


@contextmanager
def _holding(lock: threading.Lock) -> Iterator[None]:
    with lock:
        yield


class MemoryKB:
    """A handle on one knowledge base of a :class:`MemoryStore` (see ``KBStore``)."""

    def __init__(self, store: MemoryStore, name: str) -> None:
        self.store = store
        self.name = name

    def apply(
        self,
        updates: Sequence[DocumentUpdate] = (),
        removed_doc_ids: Sequence[str] = (),
        meta: Mapping[str, str] | None = None,
    ) -> None:
        self.store._apply(self.name, updates, removed_doc_ids, meta)

    def dense(
        self, vector: Vectors, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        state = self.store._state(self.name)
        index, ids = state.dense_index
        if index is None:
            return []
        return [
            (state.chunks[ids[i]], score) for i, score in index.search(vector, k, filter, self.name)
        ]

    def keyword(
        self, text: str, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        state = self.store._state(self.name)
        query = _query_terms(text)
        identifiers = identifier_query(text)
        if not (query or identifiers) or k <= 0:
            return []
        words = _bm25(state.terms, state.document_frequency, query)
        held = _bm25(state.idents, state.identifier_frequency, identifiers) if identifiers else {}
        order = {chunk_id: i for i, chunk_id in enumerate(state.chunks)}
        hits = {
            cid: (words.get(cid, (0.0, 0))[0], *held.get(cid, (0.0, 0)))
            for cid in words.keys() | held.keys()
            if matches(filter, state.chunks[cid])
        }
        # Without identifiers in the query the tier adds nothing: the word score alone.
        scores = tier_scores(hits) if identifiers else {cid: w for cid, (w, _, _) in hits.items()}
        ranked = sorted(scores, key=lambda cid: (-scores[cid], order[cid]))
        return [(state.chunks[cid], scores[cid]) for cid in ranked[:k]]

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        chunks = self.store._state(self.name).chunks
        return [chunks[i] for i in ids if i in chunks]

    def neighbours(self, chunk_id: str, n: int) -> list[Chunk]:
        chunks = self.store._state(self.name).chunks
        target = chunks.get(chunk_id)
        if target is None:
            return []
        same = sorted(
            (c for c in chunks.values() if c.doc_id == target.doc_id), key=lambda c: c.position
        )
        before = [c for c in same if c.position < target.position]
        after = [c for c in same if c.position >= target.position]
        n = max(n, 0)
        return (before[-n:] if n else []) + after[: n + 1]

    def documents(self) -> list[Document]:
        documents = self.store._state(self.name).documents
        return [documents[d] for d in sorted(documents)]

    def chunk_ids(self) -> set[str]:
        return set(self.store._state(self.name).chunks)

    def meta(self) -> dict[str, str]:
        return dict(self.store._state(self.name).meta)
