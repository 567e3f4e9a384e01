"""Chunks written before their vectors (SQLite): keyword search at once, dense search only
over chunks that have vectors, filled batch by batch with the count kept in step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citewise.store import SQLiteStore
from citewise.store.base import VectorsLater, vectors_missing
from citewise.store.memory import MemoryStore
from tests.store.support import DIM, unit, update

TEXTS = ["Install with pip", "Configure the server port", "Run the tests with pytest"]


@pytest.fixture
def sqlite(tmp_path: Path) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "kb")
    yield store  # type: ignore[misc]
    store.close()


def test_text_first_is_searchable_by_keywords_and_dense_sees_only_filled_chunks(
    sqlite: SQLiteStore,
) -> None:
    kb = sqlite.create("docs")
    assert isinstance(kb, VectorsLater)
    given = update("guide", TEXTS)
    text_only = type(given)(given.document, given.chunks, {})
    kb.apply([text_only], vectors_later=True)
    assert kb.vectors_missing() == 3 == vectors_missing(kb)
    assert [c.text for c, _ in kb.keyword("server port", 3)][0] == "Configure the server port"
    assert kb.dense(unit("q"), 3) == []  # no vectors at all: nothing dense

    first = given.chunks[1]
    assert kb.fill_vectors({first.chunk_id: given.vectors[first.chunk_id]}) == 2
    assert [c.chunk_id for c, _ in kb.dense(unit("q"), 3)] == [first.chunk_id]
    assert [c.chunk_id for c in kb.without_vectors(10)] == [
        given.chunks[0].chunk_id,
        given.chunks[2].chunk_id,
    ]
    # Filled twice, or for a chunk that is not stored: ignored.
    assert kb.fill_vectors({first.chunk_id: unit("other", 2), "nope": unit("x")}) == 2
    rest = {c.chunk_id: given.vectors[c.chunk_id] for c in kb.without_vectors(10)}
    assert kb.fill_vectors(rest) == 0
    assert kb.vectors_missing() == 0
    assert len(kb.dense(unit("q"), 3)) == 3


def test_a_vector_of_another_dimension_writes_nothing(sqlite: SQLiteStore) -> None:
    kb = sqlite.create("docs")
    given = update("guide", TEXTS)
    kb.apply([type(given)(given.document, given.chunks, {})], vectors_later=True)
    ok = {given.chunks[0].chunk_id: given.vectors[given.chunks[0].chunk_id]}
    kb.fill_vectors(ok)
    wide = {given.chunks[1].chunk_id: np.ones((1, DIM + 1), dtype=np.float32)}
    with pytest.raises(ValueError, match="vector dim"):
        kb.fill_vectors({**wide, given.chunks[2].chunk_id: unit("z")})
    assert kb.vectors_missing() == 2  # neither the wide nor the good one of that call


def test_the_count_follows_removals_and_later_writes(sqlite: SQLiteStore) -> None:
    kb = sqlite.create("docs")
    guide = update("guide", TEXTS)
    kb.apply([type(guide)(guide.document, guide.chunks, {})], vectors_later=True)
    # A normal write (its new chunks with vectors) keeps the waiting ones counted.
    kb.apply([update("other", ["Another page"])])
    assert kb.vectors_missing() == 3
    kb.apply(removed_doc_ids=["guide"])
    assert kb.vectors_missing() == 0
    assert len(kb.dense(unit("q"), 5)) == 1


def test_a_new_chunk_still_needs_vectors_without_vectors_later(sqlite: SQLiteStore) -> None:
    kb = sqlite.create("docs")
    given = update("guide", TEXTS)
    with pytest.raises(ValueError, match="has no vectors"):
        kb.apply([type(given)(given.document, given.chunks, {})])
    assert kb.chunk_ids() == set()


def test_a_store_that_cannot_defer_counts_nothing_missing() -> None:
    memory = MemoryStore()
    kb = memory.create("docs")
    assert not isinstance(kb, VectorsLater)
    assert vectors_missing(kb) == 0
