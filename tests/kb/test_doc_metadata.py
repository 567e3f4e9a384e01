"""Document metadata: kept from PDF, DOCX, HTML and pre-parsed documents, listed by
``citewise doc list``, filterable (``doc_metadata``, ``--metadata KEY=VALUE``); an older
SQLite file gains the column in place."""

from __future__ import annotations

import io
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from citewise.cli import main
from citewise.kb import KnowledgeBase
from citewise.store.sqlite_schema import SCHEMA_VERSION
from tests.kb_support import MakeKB
from tests.parsing.files import make_pdf

HTML = (
    "<html><head><title>Kernels</title><meta name='author' content='Linus'>"
    "<meta name='description' content='How kernels schedule tasks'></head>"
    "<body><main><h1>Kernels</h1><p>The scheduler picks the next task.</p></main></body></html>"
)


def pdf_with_info() -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(["Engines compute tables."]))))
    writer.add_metadata({
        "/Author": "Ada Lovelace", "/Subject": "Analytical engines",
        "/CreationDate": "D:20240102030405Z",
    })  # fmt: skip
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_with_properties() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Compilers", level=1)
    document.add_paragraph("A compiler translates programs.")
    props = document.core_properties
    props.author, props.subject, props.comments = "Grace Hopper", "Compilers", "On compiling"
    props.created = datetime(2023, 5, 6, 7, 8, 9, tzinfo=UTC)
    props.modified = datetime(2024, 1, 1, tzinfo=UTC)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


PARSED = json.dumps({
    "id": "notes.md", "metadata": {"title": "Notes", "authors": ["Ken", "Dennis"],
                                   "last_modified": "2020-02-02"},
    "sections": [{"heading": "Pipes", "level": 1, "content": "Pipes join programs."}],
}).encode()  # fmt: skip


@pytest.fixture
def kb(make_kb: MakeKB) -> KnowledgeBase:
    kb = make_kb("meta")
    kb.add_upload(
        [("engines.pdf", pdf_with_info()), ("compilers.docx", docx_with_properties()),
         ("kernels.html", HTML.encode())],
        parsed=PARSED,
    )  # fmt: skip
    return kb


def test_each_format_s_metadata_is_kept(kb: KnowledgeBase) -> None:
    found = {doc.doc_id: doc.metadata_dict for doc in kb.documents()}
    assert found["engines.pdf"] == {
        "author": "Ada Lovelace", "subject": "Analytical engines",
        "created": "2024-01-02T03:04:05+00:00",
    }  # fmt: skip
    assert found["compilers.docx"] == {
        "author": "Grace Hopper", "subject": "Compilers", "description": "On compiling",
        "created": "2023-05-06T07:08:09Z", "modified": "2024-01-01T00:00:00Z",
    }  # fmt: skip
    assert found["kernels.html"] == {"author": "Linus", "description": "How kernels schedule tasks"}
    assert found["notes.md"] == {"author": "Ken, Dennis", "modified": "2020-02-02"}


def test_the_metadata_filter_narrows_a_search(kb: KnowledgeBase) -> None:
    every = {
        hit.chunk.doc_id for hit in kb.search("programs tasks tables", search_type="full_text")
    }
    assert len(every) >= 3
    only = kb.search("programs tasks tables", doc_metadata={"author": "  grace HOPPER "})
    assert {hit.chunk.doc_id for hit in only} == {"compilers.docx"}
    both = kb.search("programs", doc_metadata={"author": "Linus", "subject": "Compilers"})
    assert both == []
    # With doc_ids as well: the intersection.
    assert kb.search("programs", doc_ids=("kernels.html",), doc_metadata={"author": "Linus"})


def test_doc_list_shows_it_and_search_filters_by_flag(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    assert main(["doc", "list", "--kb", "meta"]) == 0
    listing = capsys.readouterr().out
    assert "engines.pdf" in listing and "author=Ada Lovelace" in listing
    assert main(["doc", "list", "--kb", "meta", "--json"]) == 0
    rows = {row["doc_id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["kernels.html"]["metadata"]["author"] == "Linus"
    argv = ["search", "programs tasks", "--kb", "meta", "--json", "--metadata", "author=Linus"]
    assert main(argv) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits and {hit["doc_id"] for hit in hits} == {"kernels.html"}
    assert main(["search", "x", "--kb", "meta", "--metadata", "author"]) != 0
    assert "--metadata 'author': expected KEY=VALUE" in capsys.readouterr().err


def test_an_older_sqlite_file_gains_the_column_in_place(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = next((tmp_path / "home" / "kb").glob("meta*.sqlite"))
    kb.library.close()
    with sqlite3.connect(path) as conn:  # back to what schema 3 wrote
        conn.execute("ALTER TABLE documents DROP COLUMN metadata")
        conn.execute("UPDATE meta SET value = '3' WHERE key = '_schema'")
    reopened = KnowledgeBase("meta", settings=kb.settings)
    assert {doc.metadata for doc in reopened.documents()} == {()}  # kept, none yet
    assert len(reopened.documents()) == 4 and reopened.search("compiler", top_k=1)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = '_schema'").fetchone() == (
            SCHEMA_VERSION,
        )
    assert SCHEMA_VERSION == "6"
