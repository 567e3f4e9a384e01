"""PDF files, written by hand in the tests: outline sections, page numbers and page anchors."""

from __future__ import annotations

import sys

import pytest

from citewise.errors import MissingExtraError, SourceError
from citewise.models import Section
from citewise.parsing.base import binary_parser, parser_for
from citewise.parsing.pdf import PdfParser, parse_pdf

from .files import OutlineItem, make_pdf

SITE = "https://docs.example/"
URL = f"{SITE}manuals/widget.pdf"

PAGES = [
    ["Widget Manual", "Cover page text."],
    ["1 Installation", "Install with pip.", "1.1 Upgrade", "Upgrade (carefully) with pip -U."],
    ["More upgrade notes.", "2 Configuration", "Set WIDGET_HOME."],
]
OUTLINE = [
    OutlineItem("1 Installation", 1, [OutlineItem("1.1 Upgrade", 1)]),
    OutlineItem("2 Configuration", 2),
]


def parse(data: bytes, doc_id: str = "manuals/widget.pdf") -> list[Section]:
    return parse_pdf(data, doc_id=doc_id, site_url=SITE, version=None, scope="manuals")


def test_outline_headings_split_sections_with_their_page_numbers() -> None:
    sections = parse(make_pdf(PAGES, OUTLINE, title="Widget Manual"))
    assert [(s.heading_path, s.level, s.page_number, s.text) for s in sections] == [
        (("Widget Manual", "Page 1"), 1, 1, "Widget Manual\nCover page text."),
        (("Widget Manual", "1 Installation"), 1, 2, "Install with pip."),
        (
            ("Widget Manual", "1 Installation", "1.1 Upgrade"),
            2,
            2,
            "Upgrade (carefully) with pip -U.",
        ),
        # The heading's text goes on over the page break: its next page is its own section.
        (("Widget Manual", "1 Installation", "1.1 Upgrade"), 2, 3, "More upgrade notes."),
        (("Widget Manual", "2 Configuration"), 1, 3, "Set WIDGET_HOME."),
    ]
    assert [s.title for s in sections] == [
        "Page 1",
        "1 Installation",
        "1.1 Upgrade",
        "1.1 Upgrade",
        "2 Configuration",
    ]
    for section in sections:
        assert section.anchor == f"page={section.page_number}"
        assert section.url == f"{URL}#page={section.page_number}"
        assert section.page == "manuals/widget.pdf"
        assert section.scope == "manuals"


def test_without_an_outline_each_page_is_a_section() -> None:
    sections = parse(make_pdf([["First page."], [], ["Third page."]]), doc_id="notes.pdf")
    assert [(s.title, s.heading_path, s.page_number, s.url, s.text) for s in sections] == [
        ("Page 1", ("Notes", "Page 1"), 1, f"{SITE}notes.pdf#page=1", "First page."),
        ("Page 3", ("Notes", "Page 3"), 3, f"{SITE}notes.pdf#page=3", "Third page."),
    ]


def test_a_heading_not_found_on_its_page_starts_at_the_page_top() -> None:
    pages = [["Preface text."], ["Body of chapter one."]]
    sections = parse(make_pdf(pages, [OutlineItem("Chapter One", 1)]), doc_id="book.pdf")
    assert [(s.heading_path, s.page_number, s.text) for s in sections] == [
        (("Book", "Page 1"), 1, "Preface text."),
        (("Book", "Chapter One"), 2, "Body of chapter one."),
    ]


def test_an_application_made_title_gives_way_to_the_file_name() -> None:
    data = make_pdf([["Hello."]], title="Microsoft Word - draft3.docx")
    assert parse(data, doc_id="release-notes.pdf")[0].heading_path == ("Release notes", "Page 1")


@pytest.mark.parametrize("placeholder", ["(anonymous)", "anonymous", "Untitled", "[untitled]", ""])
def test_a_placeholder_or_missing_title_gives_way_to_the_file_name(placeholder: str) -> None:
    data = make_pdf([["Hello."]], title=placeholder or None)
    (section,) = parse(data, doc_id="policies/leave-policy.pdf")
    assert section.heading_path == ("Leave policy", "Page 1")
    assert "anonymous" not in " ".join(section.heading_path)


def test_unreadable_and_textless_pdfs_are_refused_with_their_name() -> None:
    with pytest.raises(SourceError, match=r"broken\.pdf: not a readable PDF"):
        parse(b"%PDF-1.4\nthis is not a pdf", doc_id="broken.pdf")
    # Blank pages: OCR (when installed) finds nothing either; without it, the error names it.
    with pytest.raises(SourceError, match=r"scan\.pdf: the PDF has no text"):
        parse(make_pdf([[], []]), doc_id="scan.pdf")


def test_missing_pypdf_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)
    with pytest.raises(MissingExtraError, match=r"citewise\[formats\]") as caught:
        parse(make_pdf([["x"]]))
    assert caught.value.package == "pypdf"


def test_registered_as_a_binary_parser() -> None:
    parser = parser_for("docs/Manual.PDF")
    assert isinstance(parser, PdfParser)
    assert binary_parser(parser) is parser
    with pytest.raises(TypeError, match="binary format"):
        parser.parse("%PDF", doc_id="a.pdf", site_url=SITE, version=None)
