"""An ingest keeps the objects alive before it (then its chunks) out of the cyclic garbage
collector's scans while it builds, and leaves the collector as it found it: unfrozen after
the build, even a failed one, and someone else's freeze untouched."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from citewise.errors import EmbeddingError
from citewise.kb import ingest
from tests.kb_support import MakeKB, upload


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """A collector with nothing frozen, left that way (a test that fails mid-way included)."""
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.enable()


def scanned(thing: object) -> bool:
    """Whether the collector scans ``thing`` now (frozen objects are in no generation)."""
    return any(one is thing for one in gc.get_objects())


def test_the_build_runs_with_older_objects_frozen_and_unfreezes(
    make_kb: MakeKB, monkeypatch: pytest.MonkeyPatch, unfrozen: None
) -> None:
    kb = make_kb("frozen")
    older: list[object] = [object()]  # a container alive before the ingest
    seen: list[tuple[int, bool]] = []
    chunk_sections, embedded = ingest.chunk_sections, ingest._embedded

    def chunking(*args: Any, **kwargs: Any) -> Any:
        seen.append((gc.get_freeze_count(), scanned(older)))
        return chunk_sections(*args, **kwargs)

    def embedding(pending: Any, *args: Any, **kwargs: Any) -> Any:
        # By now the chunks are frozen too: the freeze holds them and what came before.
        seen.append((gc.get_freeze_count(), scanned(pending[0].chunks)))
        return embedded(pending, *args, **kwargs)

    monkeypatch.setattr(ingest, "chunk_sections", chunking)
    monkeypatch.setattr(ingest, "_embedded", embedding)
    assert scanned(older)
    kb.add_documents([upload("a.md", "# A\n\nAlpha text.")])
    (while_chunking, older_scanned), (while_embedding, chunks_scanned) = seen
    assert 0 < while_chunking < while_embedding
    assert not older_scanned and not chunks_scanned
    assert gc.get_freeze_count() == 0 and scanned(older)
    assert [hit.chunk.doc_id for hit in kb.search("Alpha", search_type="full_text", top_k=1)] == [
        "a.md"
    ]


def test_a_failed_build_unfreezes_too(
    make_kb: MakeKB, monkeypatch: pytest.MonkeyPatch, unfrozen: None
) -> None:
    kb = make_kb("failing")

    def broken(*args: Any, **kwargs: Any) -> Any:
        assert gc.get_freeze_count() > 0
        raise EmbeddingError("the model is gone")

    monkeypatch.setattr(ingest, "_embedded", broken)
    with pytest.raises(EmbeddingError):
        kb.add_documents([upload("a.md", "# A\n\nAlpha text.")])
    assert gc.get_freeze_count() == 0


def test_someone_elses_freeze_and_a_disabled_collector_are_left_alone(
    make_kb: MakeKB, monkeypatch: pytest.MonkeyPatch, unfrozen: None
) -> None:
    kb = make_kb("theirs")
    seen: list[tuple[bool, bool]] = []
    chunk_sections = ingest.chunk_sections
    theirs: list[object] = [object()]
    gc.freeze()  # a server that froze its objects before forking its workers
    mine: list[object] = [object()]  # made after their freeze

    def chunking(*args: Any, **kwargs: Any) -> Any:
        seen.append((scanned(theirs), scanned(mine)))
        return chunk_sections(*args, **kwargs)

    monkeypatch.setattr(ingest, "chunk_sections", chunking)
    kb.add_documents([upload("a.md", "# A\n\nAlpha text.")])
    # Nothing more frozen and nothing thawed. (Their frozen count may fall meanwhile: a
    # frozen object is still freed when the last reference to it goes.)
    assert seen == [(False, True)] and not scanned(theirs) and gc.get_freeze_count() > 0
    gc.unfreeze()
    gc.disable()
    kb.add_documents([upload("b.md", "# B\n\nBeta text.")])
    assert seen[1] == (True, True) and gc.get_freeze_count() == 0 and not gc.isenabled()
