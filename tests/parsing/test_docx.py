"""Word documents made with python-docx: headings, paragraphs, lists and tables in order."""

from __future__ import annotations

import io
import sys
import zipfile

import docx
import pytest

from citewise.chunking import chunk_sections
from citewise.config import Limits
from citewise.errors import MissingExtraError, SourceError, TooLargeError
from citewise.models import Section
from citewise.parsing.base import binary_parser, parser_for, takes_limits
from citewise.parsing.docx import DocxParser, parse_docx

from .files import make_docx

SITE = "https://docs.example/"
URL = f"{SITE}1.0/handbook.docx"


def parse(data: bytes, doc_id: str = "handbook.docx") -> list[Section]:
    return parse_docx(data, doc_id=doc_id, site_url=SITE, version="1.0")


def saved(document: docx.document.Document) -> bytes:
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_sections_at_title_and_headings_with_paths_and_anchors() -> None:
    sections = parse(make_docx())
    assert [(s.title, s.heading_path, s.level, s.anchor, s.url) for s in sections] == [
        ("Widget Handbook", ("Widget Handbook",), 1, "", URL),
        (
            "Installation",
            ("Widget Handbook", "Installation"),
            1,
            "installation",
            f"{URL}#installation",
        ),
        (
            "Supported platforms",
            ("Widget Handbook", "Installation", "Supported platforms"),
            2,
            "supported-platforms",
            f"{URL}#supported-platforms",
        ),
        (
            "Configuration",
            ("Widget Handbook", "Configuration"),
            1,
            "configuration",
            f"{URL}#configuration",
        ),
        (
            "Installation",
            ("Widget Handbook", "Installation"),
            1,
            "installation_1",
            f"{URL}#installation_1",
        ),
    ]
    assert {s.page for s in sections} == {"handbook.docx"}


def test_paragraphs_links_lists_and_tables_keep_document_order() -> None:
    title, install, platforms, config, _ = parse(make_docx())
    assert title.text == "Read this before anything else."
    assert install.text == (
        "Install the widget from [PyPI](https://pypi.org/project/widget/) with pip.\n\n"
        "- Check the Python version\n"
        "- Run pip install widget\n"
        "  - Use a virtual environment"
    )
    assert platforms.text == (
        "| OS | Arch | Notes |\n"
        "| --- | --- | --- |\n"
        "| Linux | x86_64 | tested, daily |\n"
        "| macOS | arm64 | a\\|b |\n\n"
        "Other platforms may work."
    )
    assert config.text == "Set WIDGET_HOME to choose the data folder."


def test_without_a_title_the_first_heading_is_the_page_and_numbered_lists_are_items() -> None:
    document = docx.Document()
    document.core_properties.title = "Ops Guide"
    document.add_paragraph("Preamble before any heading.")
    document.add_heading("Deploy", level=1)
    document.add_paragraph("Build the image", style="List Number")
    document.add_paragraph("Push it", style="List Number")
    document.add_paragraph("Then watch the logs.")
    document.add_heading("Verify", level=3)
    document.add_heading("Deep", level=7)  # below Heading 6: an ordinary paragraph
    sections = parse(saved(document), doc_id="ops/guide.docx")
    assert [(s.title, s.heading_path, s.anchor, s.text) for s in sections] == [
        ("Deploy", ("Deploy",), "", "Preamble before any heading.\n\n"
         "- Build the image\n- Push it\n\nThen watch the logs."),
        ("Verify", ("Deploy", "Verify"), "verify", "Deep"),
    ]  # fmt: skip
    assert sections[0].url == f"{SITE}1.0/ops/guide.docx"


def test_headings_only_below_a_title_nest_under_the_document_title() -> None:
    document = docx.Document()
    document.core_properties.title = "Core Title"
    document.add_paragraph("Intro text.")
    document.add_heading("Details", level=2)
    document.add_paragraph("More.")
    sections = parse(saved(document), doc_id="d.docx")
    assert [(s.title, s.heading_path, s.anchor) for s in sections] == [
        ("Core Title", ("Core Title",), ""),
        ("Details", ("Core Title", "Details"), "details"),
    ]


def test_long_tables_chunk_between_whole_rows() -> None:
    document = docx.Document()
    document.add_heading("Inventory", level=1)
    table = document.add_table(rows=31, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Item", "Description"
    for index, row in enumerate(table.rows[1:], start=1):
        row.cells[0].text = f"item-{index}"
        row.cells[1].text = "a fairly long description of the item " * 2
    chunks = chunk_sections(parse(saved(document), doc_id="inv.docx"), max_chars=500)
    assert len(chunks) > 2
    rows = []
    for chunk in chunks:
        lines = chunk.text.split("\n\n", 1)[1].split("\n")
        assert lines[:2] == ["| Item | Description |", "| --- | --- |"]
        rows.extend(lines[2:])
    assert [row.split(" | ")[0] for row in rows] == [f"| item-{i}" for i in range(1, 31)]


def test_bad_files_are_refused_with_their_name() -> None:
    with pytest.raises(SourceError, match=r"bad\.docx: not a DOCX file"):
        parse(b"plain text", doc_id="bad.docx")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("hello.txt", "not a word document")
    with pytest.raises(SourceError, match=r"zip\.docx: not a readable DOCX file"):
        parse(out.getvalue(), doc_id="zip.docx")


def test_a_zip_that_expands_too_far_is_refused_before_parsing() -> None:
    data = make_docx()
    small = Limits(max_unpacked_bytes=1000)
    with pytest.raises(TooLargeError, match=r"bomb\.docx: expands to .* over the 1000 bytes"):
        parse_docx(data, doc_id="bomb.docx", site_url=SITE, version="1.0", limits=small)
    assert parse(data, doc_id="bomb.docx")  # within the default limits


def test_the_registered_parser_is_given_the_limits() -> None:
    parser = parser_for("t.docx")
    assert parser is not None and takes_limits(parser)
    binary = binary_parser(parser)
    assert binary is not None
    with pytest.raises(TooLargeError, match=r"t\.docx: a table of 9 cells, over the limit of 5"):
        binary.parse_bytes(
            make_docx(), doc_id="t.docx", site_url=SITE, version=None,
            limits=Limits(max_table_cells=5),
        )  # fmt: skip


def test_missing_python_docx_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    data = make_docx()
    monkeypatch.setitem(sys.modules, "docx", None)
    with pytest.raises(MissingExtraError, match=r"python-docx.*citewise\[formats\]"):
        parse(data)


def test_registered_as_a_binary_parser() -> None:
    parser = parser_for("Handbook.DOCX")
    assert isinstance(parser, DocxParser)
    assert binary_parser(parser) is parser
