"""Knowledge bases of uploaded files: settings, ingest, deletion counts, limits, concurrency."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from citewise.config import Limits, ParseSettings, Settings
from citewise.errors import ConfigurationError, KnowledgeBaseError, SourceError, TooLargeError
from citewise.kb import IndexStrategy, KBConfig, KnowledgeBase, source_from_bytes
from citewise.kb.config import stored_embedder
from citewise.options import SearchOptions
from citewise.sources.upload import upload_doc_id
from citewise.testing import ScriptedChatModel, script
from tests.kb_support import MakeKB, sections, upload
from tests.parsing.files import make_docx, make_pdf

INSTALL = sections("Install", "Run pip install example to install the package.")
CONFIG = sections("Configure", "Set EXAMPLE_KEY in the environment.", "Logs go to stderr.")


def test_create_keeps_settings_in_meta(tmp_path: Path) -> None:
    config = KBConfig(
        strategy=IndexStrategy("parent_child", parent_chars=1200, child_chars=300),
        embedder="minilm",
        defaults=SearchOptions(top_k=3, search_type="full_text", context_window=1),
        description="team handbook",
    )
    settings = Settings(home=tmp_path)
    KnowledgeBase.create("handbook", config, settings=settings)
    assert KnowledgeBase("handbook", settings=settings).config == config
    with pytest.raises(KnowledgeBaseError, match="already exists"):
        KnowledgeBase.create("handbook", config, settings=settings)


def test_create_checks_the_embedder_before_making_anything(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    with pytest.raises(ConfigurationError, match="unknown embedder"):
        KnowledgeBase.create("x", KBConfig(embedder="nope"), settings=settings)
    assert not KnowledgeBase("x", settings=settings).exists


def test_meta_names_the_embedder_and_its_model_and_the_old_layout_is_read(
    make_kb: MakeKB,
) -> None:
    kb = make_kb()
    kb.add_documents([upload("install.md", INSTALL)])
    meta = kb.meta()
    assert (meta["embedder"], meta["embedder_model"]) == ("minilm", kb.embedder.model_id)
    assert stored_embedder(meta) == ("minilm", kb.embedder.model_id)
    # Before one vocabulary, ``embedder`` held the model id and ``embedder_name`` the name.
    old = {"embedder": "some/model-id", "embedder_name": "e5"}
    assert stored_embedder(old) == ("e5", "some/model-id")
    assert KBConfig.from_meta(old, default_embedder="minilm").embedder == "e5"


def test_describe_shows_settings_and_size(make_kb: MakeKB) -> None:
    kb = make_kb("described")
    kb.add_documents([upload("install.md", INSTALL), upload("config.md", CONFIG)])
    described = kb.describe()
    assert (described["name"], described["strategy"], described["embedder"]) == (
        "described", "section", "minilm",
    )  # fmt: skip
    assert described["documents"] == 2 and described["chunks"] == len(kb.store.chunk_ids()) == 5


def test_a_model_given_to_the_knowledge_base_writes_the_answers(make_kb: MakeKB) -> None:
    model = ScriptedChatModel(reply=script(answer="Use pip."))
    kb = make_kb(model=model)
    kb.add_documents([upload("install.md", INSTALL)])
    answer = kb.ask("How do I install it?")
    assert (answer.kind, answer.text) == ("generated", "Use pip.")
    assert [call.kind for call in model.calls] == ["Plan", "answer"]
    assert answer.hits and answer.hits[0].chunk.doc_id == "install.md"

    other = ScriptedChatModel(reply=script(answer="Another model."))
    assert kb.with_model(other).ask("How do I install it?").text == "Another model."
    assert kb.ask("How do I install it?", model=other).text == "Another model."
    assert len(model.calls) == 2 and len(other.calls) == 4


def test_add_documents_of_every_format(make_kb: MakeKB) -> None:
    kb = make_kb()
    files = [
        upload("guide/install.md", INSTALL),
        upload("notes.txt", "Plain text notes about the release schedule."),
        upload("sizes.csv", "name,size\nsmall,1\nlarge,9\n"),
        upload("page.html", "<html><body><h1>Proxy</h1><p>Use a reverse proxy.</p></body></html>"),
        source_from_bytes("manual.pdf", make_pdf([["Backups", "Back up the database nightly."]])),
        source_from_bytes("handbook.docx", make_docx()),
    ]
    report = kb.add_documents(files)
    assert sorted(report.added) == sorted(f.doc_id for f in files)
    assert {d.doc_id for d in kb.documents()} == {f.doc_id for f in files}
    hits = kb.search("back up the database", top_k=1)
    assert hits[0].chunk.doc_id == "manual.pdf"
    again = kb.add_documents(files[:1])
    assert again.unchanged == ["guide/install.md"] and again.chunks_embedded == 0


def test_replacing_a_document_drops_its_old_chunks(make_kb: MakeKB) -> None:
    kb = make_kb()
    # Each page is its h1 (a heading-only chunk) plus one chunk per part.
    assert kb.add_documents([upload("a.md", sections("A", "one", "two", "three"))]).chunks == 4
    kb.add_documents([upload("a.md", sections("A", "only one now"))])
    assert kb.delete_document("a.md") == 2


def test_delete_counts_chunks_and_absent_is_zero(make_kb: MakeKB) -> None:
    kb = make_kb()
    kb.add_documents([upload("install.md", INSTALL), upload("config.md", CONFIG)])
    chunks = len(kb.store.chunk_ids())
    assert kb.delete_document("config.md") == 3  # its h1 and two parts
    assert kb.delete_document("config.md") == 0
    assert kb.delete_document("never-there.md") == 0
    assert len(kb.store.chunk_ids()) == chunks - 3
    assert all(h.chunk.doc_id == "install.md" for h in kb.search("EXAMPLE_KEY environment"))


def test_file_over_the_size_limit_stores_nothing(make_kb: MakeKB) -> None:
    kb = make_kb()
    big = source_from_bytes("big.txt", b"x" * (Limits().max_file_bytes + 1))
    with pytest.raises(TooLargeError, match="refused before parsing"):
        kb.add_documents([upload("install.md", INSTALL), big])
    assert kb.documents() == []


def test_parsed_text_over_the_limit_stores_nothing(make_kb: MakeKB) -> None:
    long = upload("long.md", sections("Long", "word " * 100))
    kb = make_kb(parse=ParseSettings(limits=Limits(max_text_bytes=100)))
    with pytest.raises(TooLargeError, match=r"long\.md: parsed text is over the 100 bytes limit"):
        kb.add_documents([long])
    assert kb.documents() == [] and kb.store.chunk_ids() == set()
    # The same file within the default limits is stored.
    assert make_kb("roomy").add_documents([long]).added == ["long.md"]


def test_the_knowledge_base_settings_limit_files_and_parsed_content(
    make_kb: MakeKB, tmp_path: Path
) -> None:
    kb = make_kb(parse=ParseSettings(limits=Limits(max_file_bytes=100, max_sections=2)))
    with pytest.raises(TooLargeError, match=r"up\.md: file is 207 bytes, over the 100 bytes"):
        kb.add_upload([("up.md", b"# Big\n\n" + b"x" * 200)])
    parsed = b'{"id": "p.md", "sections": [{"content": "a"}, {"content": "b"}, {"content": "c"}]}'
    with pytest.raises(TooLargeError, match=r"p\.md: 3 sections, over the limit of 2"):
        kb.add_upload([], parsed=parsed)
    (tmp_path / "big.md").write_text("x" * 101)
    with pytest.raises(TooLargeError, match=r"big\.md: file is 101 bytes, over the 100 bytes"):
        kb.add_files([tmp_path / "big.md"])
    assert kb.documents() == []


@pytest.mark.parametrize("name", ["../etc/passwd", "/abs.md", "", "a\x00.md", "..\\x.md"])
def test_hostile_upload_names_are_refused(name: str) -> None:
    with pytest.raises(SourceError, match="invalid document name"):
        upload_doc_id(name)


def test_unsupported_format_is_refused() -> None:
    with pytest.raises(SourceError, match="unsupported format .exe"):
        source_from_bytes("tool.exe", b"MZ")


def test_doc_add_needs_an_existing_knowledge_base(tmp_path: Path) -> None:
    kb = KnowledgeBase("missing", settings=Settings(home=tmp_path))
    with pytest.raises(KnowledgeBaseError, match="unknown knowledge base"):
        kb.add_documents([upload("a.md", INSTALL)])


def test_drop_removes_the_knowledge_base(make_kb: MakeKB) -> None:
    kb = make_kb("gone")
    kb.drop()
    assert not kb.exists


def test_the_write_lock_serializes_deletes(make_kb: MakeKB) -> None:
    kb = make_kb()
    kb.add_documents([upload("a.md", INSTALL)])
    started, finished = threading.Event(), threading.Event()

    def delete() -> None:
        started.set()
        kb.delete_document("a.md")
        finished.set()

    with kb.write_lock():
        thread = threading.Thread(target=delete)
        thread.start()
        started.wait()
        # The delete cannot finish while the lock is held, however long it has had.
        assert not finished.is_set()
        assert [d.doc_id for d in kb.documents()] == ["a.md"]
    thread.join()
    assert finished.is_set() and kb.documents() == []


def test_searches_see_whole_versions_during_ingest_and_delete(make_kb: MakeKB) -> None:
    kb = make_kb()
    # Every chunk says "zebra" and which version it belongs to: v1 has 3 chunks, v2 has 5.
    versions = {
        "v1": sections("Zoo", *(f"zebra versionone chunk{i}" for i in range(3))),
        "v2": sections("Zoo", *(f"zebra versiontwo chunk{i}" for i in range(5))),
    }
    expected = {"versionone": 3, "versiontwo": 5}
    kb.add_documents([upload("zoo.md", versions["v1"])])
    stop = threading.Event()
    seen: list[tuple[str, ...]] = []
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for round_ in range(6):
                kb.add_documents([upload("zoo.md", versions["v2" if round_ % 2 == 0 else "v1"])])
                if round_ % 3 == 2:
                    kb.delete_document("zoo.md")
                    kb.add_documents([upload("zoo.md", versions["v1"])])
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)
        finally:
            stop.set()

    def reader() -> None:
        try:
            while not stop.is_set():
                hits = kb.store.keyword("zebra", 50)
                seen.append(tuple(sorted(h.text.split()[-2] for h, _ in hits)))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=writer)] + [
        threading.Thread(target=reader) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert seen
    for snapshot in seen:
        kinds = set(snapshot)
        assert len(kinds) <= 1, f"a search saw two versions at once: {snapshot}"
        if kinds:
            assert len(snapshot) == expected[kinds.pop()], f"a half-written version: {snapshot}"


def test_concurrent_ingests_of_one_knowledge_base_all_land(make_kb: MakeKB) -> None:
    kb = make_kb()
    names = [f"doc{i}.md" for i in range(4)]
    threads = [
        threading.Thread(target=kb.add_documents, args=([upload(n, sections(n, f"text {n}"))],))
        for n in names
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(d.doc_id for d in kb.documents()) == names


def test_an_answer_read_to_its_end_is_recorded_as_finished_not_cancelled(make_kb: MakeKB) -> None:
    import asyncio

    from citewise import telemetry

    kb = make_kb(model=ScriptedChatModel(reply=script(answer="Use pip.")))
    kb.add_documents([upload("install.md", INSTALL)])
    events: list[telemetry.Event] = []

    class Recorder:
        def observe(self, event: telemetry.Event) -> None:
            if event.kind == telemetry.OPERATION and event.name == "answer":
                events.append(event)

    with telemetry.listening(Recorder()):
        kb.ask("How do I install it?")
        asyncio.run(kb.aask("How do I install it?"))
    assert [event.outcome for event in events] == ["ok", "ok"]
