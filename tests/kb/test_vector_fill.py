"""A knowledge base written text first (LGOS 0.12.0): keyword answers before any vector
exists, the progress of the embedding, hybrid search identical to a normal index once it is
done; a fill that crashes keeps keyword search and a restart embeds only what is left."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from citewise import telemetry
from citewise.config import Settings
from citewise.embedding.base import Embedder
from citewise.kb import Done, KnowledgeBase, Status, vector_fill
from citewise.kb.library import Library
from citewise.kb.multi import KnowledgeBases
from citewise.models import Hit
from citewise.store.base import vectors_missing
from citewise.store.memory import MemoryStore
from tests import pg
from tests.conftest import LGOS, LGOS_SITE, LGOS_VERSION, require
from tests.kb_support import Gated

QUERIES = [
    "How do I configure the server port?",
    "How do I register a LangGraph graph with the server?",
    "streaming responses with the OpenAI client",
]


class _Recorder:
    def __init__(self, events: list[telemetry.Event]) -> None:
        self.events = events

    def observe(self, event: telemetry.Event) -> None:
        self.events.append(event)


def _text_first(home: Path, embedder: Embedder) -> tuple[KnowledgeBase, int]:
    kb = KnowledgeBase("lgos", settings=Settings(home=home), embedder=embedder)
    report = kb.index_folder(
        require(LGOS / "docs"), site_url=LGOS_SITE, version=LGOS_VERSION, vectors_later=True
    )
    return kb, report.vectors_missing


def _ids(hits: Sequence[Hit]) -> list[str]:
    return [hit.chunk.chunk_id for hit in hits]


def _wait(state: vector_fill.FillState) -> None:
    deadline = time.monotonic() + 300
    while state.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not state.running


def test_keyword_answers_before_any_vector_then_hybrid_as_a_normal_index(
    tmp_path: Path, minilm: Embedder, lgos_kb: KnowledgeBase
) -> None:
    held = Gated(minilm)
    kb, missing = _text_first(tmp_path / "home", held)
    assert held.calls == 0  # nothing embedded: the index holds only text
    assert missing == len(kb.store.chunk_ids()) == len(lgos_kb.store.chunk_ids())

    seen: list[telemetry.Event] = []
    for query in QUERIES:
        with telemetry.listening(_Recorder(seen)):
            hits = kb.search(query)
        assert hits and all(hit.rankers == ("keyword",) for hit in hits)
        assert _ids(hits) == _ids(lgos_kb.search(query, search_type="full_text"))
    # The diagnostics history counts searches made by keywords alone while embedding.
    searches = [event for event in seen if event.name == "search" and event.kind == "operation"]
    assert len(searches) == 3
    assert all(event.values.get("keyword_while_embedding") == 1.0 for event in searches)

    state = vector_fill.start(kb)
    assert state is not None and state.running and (state.done, state.total) == (0, missing)
    # The status line a routed question shows meanwhile (the library answers as one).
    kbs = KnowledgeBases(Library(Settings(home=tmp_path / "home")))
    (card,) = kbs.cards()
    line = kbs._library_embedding_status(card)
    assert line is not None and line.text.endswith(
        f": 0 of {missing} sections embedded, searching by keywords meanwhile"
    )
    assert vector_fill.start(kb) is state  # one fill per knowledge base
    # An answer from this knowledge base alone says so too, and quotes keyword hits.
    events = list(kb.stream(QUERIES[0]))
    statuses = [event.text for event in events if isinstance(event, Status)]
    assert f"Indexing lgos: 0 of {missing} sections embedded, searching by keywords meanwhile" in (
        statuses
    )
    final = events[-1]
    assert isinstance(final, Done) and final.answer.citations
    assert all(hit.rankers == ("keyword",) for hit in final.answer.hits)

    held.gate.set()
    _wait(state)
    assert state.error is None and (state.done, state.total) == (missing, missing)
    assert vectors_missing(kb.store) == 0 and kbs._library_embedding_status(card) is None
    assert not any(
        isinstance(event, Status) and "embedded" in event.text for event in kb.stream(QUERIES[0])
    )
    seen.clear()
    for query in QUERIES:
        with telemetry.listening(_Recorder(seen)):
            hybrid = kb.search(query)
        normal = lgos_kb.search(query)
        assert any("dense" in hit.rankers for hit in hybrid)
        assert _ids(hybrid) == _ids(normal)
        assert [h.score for h in hybrid] == pytest.approx([h.score for h in normal], rel=1e-3)
    assert not any("keyword_while_embedding" in event.values for event in seen)


def test_a_crashed_fill_keeps_keyword_search_and_a_restart_embeds_only_the_rest(
    tmp_path: Path, minilm: Embedder, lgos_kb: KnowledgeBase
) -> None:
    dying = Gated(minilm, fail_on=2)
    dying.gate.set()
    kb, missing = _text_first(tmp_path / "home", dying)
    state = vector_fill.start(kb)
    assert state is not None
    _wait(state)
    assert state.error == "RuntimeError: the embedding thread died"
    left = vectors_missing(kb.store)
    assert 0 < left < missing and left == missing - vector_fill.FILL_BATCH_CHUNKS
    hits = kb.search(QUERIES[0])
    assert hits and all(hit.rankers == ("keyword",) for hit in hits)
    assert vector_fill.start(kb) is state  # not retried in this process

    # A restart: another process re-runs the index, which embeds just the chunks left.
    again = Gated(minilm)
    again.gate.set()
    restarted = KnowledgeBase("lgos", settings=Settings(home=tmp_path / "home"), embedder=again)
    report = restarted.index_folder(
        require(LGOS / "docs"), site_url=LGOS_SITE, version=LGOS_VERSION
    )
    assert report.chunks_embedded == left and len(report.unchanged) == report.files
    assert vectors_missing(restarted.store) == 0
    for query in QUERIES:
        assert _ids(restarted.search(query)) == _ids(lgos_kb.search(query))


@pytest.mark.parametrize("engine", ["memory", "postgresql"])
def test_a_store_that_cannot_hold_text_alone_embeds_first(
    tmp_path: Path, minilm: Embedder, engine: str
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "index.md").write_text("# Widgets\n\n## Install\n\nRun pip install widgets.\n")
    if engine == "memory":
        library = Library(Settings(home=tmp_path / "home"), store=MemoryStore())
    else:
        url = pg.fresh_url()
        library = Library(Settings(home=tmp_path / "home", store_url=url))
    try:
        kb = KnowledgeBase("fallback", library=library, embedder=minilm)
        report = kb.index_folder(folder, vectors_later=True)
        assert report.vectors_missing == 0 and report.chunks_embedded == report.chunks > 0
        assert any("dense" in hit.rankers for hit in kb.search("install widgets"))
        assert vector_fill.start(kb) is None  # nothing to fill
    finally:
        library.store.close()
        if engine == "postgresql":
            pg.drop_schema(url)


def test_the_next_question_resumes_a_fill_that_no_process_runs(
    tmp_path: Path, minilm: Embedder
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("install", "configure", "deploy"):
        page = f"# {name.title()}\n\n## Steps\n\nHow to {name} widgets.\n"
        (folder / f"{name}.md").write_text(page)
    home = tmp_path / "home"
    # The process that wrote the text stopped before embedding any of it (held for ever).
    writer = KnowledgeBase("widgets", settings=Settings(home=home), embedder=Gated(minilm))
    missing = writer.index_folder(folder, vectors_later=True).vectors_missing
    assert missing == len(writer.store.chunk_ids()) > 0

    library = Library(Settings(home=home))  # a restarted server: no fill running here
    kbs = KnowledgeBases(library)
    events = list(kbs.stream("How do I deploy widgets?"))
    assert events and vector_fill.progress(library.open("widgets")) is not None
    state = vector_fill.progress(library.open("widgets"))
    assert state is not None
    _wait(state)
    assert (state.done, state.total, state.error) == (missing, missing, None)
    assert any("dense" in hit.rankers for hit in kbs.search("How do I deploy widgets?"))
