"""Hybrid search over a real SQLite store with a small deterministic bag-of-words embedder."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from citewise.embedding.base import Vectors
from citewise.models import Chunk, Document
from citewise.retrieval import search, search_many
from citewise.store import DocumentUpdate, KBStore, SearchFilter, SQLiteStore


class HashEmbedder:
    """Hashed bag of words: texts sharing words get close vectors; no model needed."""

    model_id = "test-hash"
    dim = 256
    window_chars = 10_000

    def _one(self, text: str) -> Vectors:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            v[int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % self.dim] += 1.0
        norm = np.float32(np.linalg.norm(v))
        return v / norm if norm else v

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return (
            np.stack([self._one(t) for t in texts])
            if texts
            else np.zeros((0, self.dim), np.float32)
        )

    def embed_query(self, text: str) -> Vectors:
        return self._one(text)


class PointingEmbedder(HashEmbedder):
    """Embeds every query as one given text, to steer the dense ranker independently of BM25."""

    def __init__(self, target: str) -> None:
        self.target = target

    def embed_query(self, text: str) -> Vectors:
        return self._one(self.target)


CORPUS = {
    # doc_id: (scope, page, texts)
    "install": (
        "start",
        "start/install/",
        ["Install citewise with pip", "Upgrade to a new release"],
    ),
    "server": ("guides", "guides/server/", ["Run the server on a port", "Server settings file"]),
    "auth": ("guides", "guides/auth/", ["API key authentication for the server", "Rotate keys"]),
    "faq": ("start", "start/faq/", ["Frequently asked questions", "Why pip fails behind proxy"]),
}
EMBEDDER = HashEmbedder()


def build(store: SQLiteStore) -> KBStore:
    updates = []
    for doc_id, (scope, page, texts) in CORPUS.items():
        chunks = [
            Chunk(
                f"{doc_id}-{i}",
                doc_id,
                i,
                i,
                t,
                doc_id,
                (doc_id,),
                f"s{i}",
                f"u/{page}",
                page,
                scope,
            )
            for i, t in enumerate(texts)
        ]
        vectors = {c.chunk_id: EMBEDDER.embed_documents([c.text]) for c in chunks}
        document = Document(doc_id, doc_id, f"u/{page}", page, "h", scope)
        updates.append(DocumentUpdate(document, chunks, vectors))
    handle = store.create("kb")
    handle.apply(updates)
    return handle


@pytest.fixture
def store(tmp_path: Path) -> Iterator[KBStore]:
    engine = SQLiteStore(tmp_path)
    yield build(engine)
    engine.close()


def ids(hits: Sequence[object]) -> list[str]:
    return [h.chunk.chunk_id for h in hits]  # type: ignore[attr-defined]


def test_vector_mode_returns_cosine_scores(store: KBStore) -> None:
    hits = search(store, EMBEDDER, "install citewise with pip", mode="vector", k=3)
    assert len(hits) == 3 and hits[0].chunk.chunk_id == "install-0"
    assert hits[0].score == pytest.approx(1.0, abs=1e-6)
    assert all(h.rankers == ("dense",) for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_keyword_mode_needs_no_embedder(store: KBStore) -> None:
    hits = search(store, None, "rotate keys", mode="keyword", k=5)
    assert ids(hits)[0] == "auth-1"
    assert all(h.rankers == ("keyword",) and h.score > 0 for h in hits)
    with pytest.raises(ValueError, match="needs an embedder"):
        search(store, None, "rotate keys", mode="hybrid")
    with pytest.raises(ValueError, match="unknown search mode"):
        search(store, EMBEDDER, "x", mode="fuzzy")


def test_hybrid_fuses_and_attributes_rankers(store: KBStore) -> None:
    hits = search(store, EMBEDDER, "rotate keys", k=10, keyword_cutoff=0.0)
    top = hits[0]
    assert top.chunk.chunk_id == "auth-1" and top.rankers == ("dense", "keyword")
    # First in both rankings: RRF gives 1/(60+1) from each.
    assert top.score == pytest.approx(2 / 61)
    dense = {h.chunk.chunk_id for h in search(store, EMBEDDER, "rotate keys", mode="vector")}
    keyword = {h.chunk.chunk_id for h in search(store, None, "rotate keys", mode="keyword")}
    for hit in hits:
        cid = hit.chunk.chunk_id
        assert hit.rankers == tuple(
            name for name, found in (("dense", dense), ("keyword", keyword)) if cid in found
        )
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_keyword_cutoff_keeps_only_the_strongest_matches(store: KBStore) -> None:
    # Dense always points at the FAQ title; BM25 finds the pip chunks, one far better.
    embedder = PointingEmbedder("Frequently asked questions")
    query = "install citewise pip"
    bm25 = dict((c.chunk_id, s) for c, s in store.keyword(query, 10))
    assert set(bm25) == {"install-0", "faq-1"} and bm25["faq-1"] < bm25["install-0"]
    ratio = bm25["faq-1"] / bm25["install-0"]

    def joined(cutoff: float) -> set[str]:
        hits = search(store, embedder, query, keyword_cutoff=cutoff)
        assert ids(hits)[0] in {"faq-0", "install-0"}  # each top of one ranker
        return {h.chunk.chunk_id for h in hits if "keyword" in h.rankers}

    assert joined((ratio + 1) / 2) == {"install-0"}
    assert joined(ratio / 2) == {"install-0", "faq-1"}
    assert joined(0.0) == {"install-0", "faq-1"}


def test_filter_is_respected_in_every_mode(store: KBStore) -> None:
    for mode in ("hybrid", "vector", "keyword"):
        hits = search(
            store, EMBEDDER, "pip server keys", mode=mode, filter=SearchFilter(scope="guides")
        )
        assert hits and {h.chunk.scope for h in hits} == {"guides"}
        hits = search(
            store, EMBEDDER, "pip", mode=mode, filter=SearchFilter(page_prefix="start/faq/")
        )
        assert ids(hits)[0] == "faq-1" and {h.chunk.page for h in hits} == {"start/faq/"}


def test_k_is_honoured(store: KBStore) -> None:
    for mode in ("hybrid", "vector"):
        assert len(search(store, EMBEDDER, "server", mode=mode, k=2)) == 2
        # k above candidates: candidates grow to k.
        assert len(search(store, EMBEDDER, "server", mode=mode, k=8, candidates=2)) == 8
    assert search(store, EMBEDDER, "server", k=0) == []
    assert search(store, EMBEDDER, "   ") == []


def test_search_many_fuses_queries(store: KBStore) -> None:
    one = search(store, EMBEDDER, "rotate keys", k=4)
    assert search_many(store, EMBEDDER, ["rotate keys", "rotate keys", " "], k=4) == one
    many = search_many(store, None, ["rotate keys", "upgrade release"], mode="keyword", k=5)
    assert set(ids(many)[:2]) == {"auth-1", "install-1"}
    assert many[0].score == pytest.approx(1 / 61)
    assert all(h.rankers == ("keyword",) for h in many)
    assert search_many(store, EMBEDDER, [], k=3) == []


def test_a_query_of_identifiers_alone_is_a_lookup_and_a_question_is_not() -> None:
    from citewise.retrieval.hybrid import is_bare_identifier_lookup

    for lookup in ("request_to_input", "LGOS_OPENAI_API_PREFIX", "`Session.mount`", "--reload",
                   "json()", "REQUESTS_CA_BUNDLE?"):  # fmt: skip
        assert is_bare_identifier_lookup(lookup), lookup
    for question in ("What is LGOS_OPENAI_API_PREFIX?", "Timeouts", "Session", "", "e.g. this"):
        assert not is_bare_identifier_lookup(question), question
