"""PDF content beyond plain text, through `citewise doc add` and search: ruled tables as
Markdown tables, scanned pages by OCR (page numbers kept), tagged figures' alt text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from citewise.parsing.ocr import ocr_available
from citewise.parsing.pdf import parse_pdf
from tests.cli.support import fail, run, run_json

from .pdfs import pdf_with_figure, pdf_with_tables, scanned_pdf

OCR_MISSING = ocr_available()
HEADER = "| Region | Share | Lead |"


def search(capsys: pytest.CaptureFixture[str], query: str) -> dict[str, object]:
    hits = run_json(capsys, "kb", "search", "team", query, "--json", "--search-type", "full_text")
    assert hits, f"nothing found for {query!r}"
    return dict(hits[0])


def test_ruled_tables_become_markdown_tables_never_split_inside_a_row(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [[f"Region{n}", f"{n}%", f"Lead number {n} of the sales team"] for n in range(30)]
    table = [["Region", "Share", "Lead"], *rows]
    pdf = home / "sales.pdf"
    pdf.write_bytes(pdf_with_tables([["Regional sales for the year.", table, "After it."]]))
    run(capsys, "kb", "create", "team", "--parent-chars", "400")
    run(capsys, "doc", "add", str(pdf), "--kb", "team")
    for n in (0, 17, 29):
        hit = search(capsys, f"Region{n}")
        text = str(hit["text"])
        # Each chunk of the long table repeats the header and holds whole rows.
        assert (
            HEADER in text and f"| Region{n} | {n}% | Lead number {n} of the sales team |" in text
        )
        for line in text.splitlines():
            assert not line.startswith("|") or line.endswith("|"), line
        assert hit["page_number"] == 1
    assert "After it." in str(search(capsys, "After")["text"])


def test_tables_keep_their_place_and_empty_or_wrapped_cells() -> None:
    long_name = "Bo Chen, whose name is long enough to wrap onto a second line of its cell"
    data = pdf_with_tables(
        [
            ["Before the tables.", [["Key", "Value"], ["a", "1"]], "Between them."],
            [[["Region", "Share", "Lead"], ["North", "40%", "Ana"], ["South", "", long_name]]],
        ]
    )
    first, second = parse_pdf(data, doc_id="t.pdf", site_url="", version=None)
    assert first.text == (
        "Before the tables.\n\n| Key | Value |\n| --- | --- |\n| a | 1 |\n\nBetween them."
    )
    assert second.page_number == 2
    assert second.text.splitlines()[2:] == ["| North | 40% | Ana |", f"| South |  | {long_name} |"]


@pytest.mark.skipif(OCR_MISSING is not None, reason=f"Tesseract cannot run here: {OCR_MISSING}")
def test_scanned_pages_are_recognised_with_their_page_numbers(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pdf = home / "handbook.pdf"
    pdf.write_bytes(
        scanned_pdf(
            "Typed cover page of the handbook.",
            [
                ["Vacation policy", "Staff get twenty days of leave."],
                ["Expenses are refunded", "within a month."],
            ],
        )
    )
    run(capsys, "kb", "create", "team")
    report = run_json(capsys, "doc", "add", str(pdf), "--kb", "team", "--json")
    assert report["added"] == ["handbook.pdf"] and report["chunks"] == 3
    vacation = search(capsys, "twenty days leave")
    assert vacation["page_number"] == 2 and str(vacation["url"]).endswith("handbook.pdf#page=2")
    assert "Vacation policy" in str(vacation["text"])
    assert search(capsys, "refunded month")["page_number"] == 3
    assert search(capsys, "cover")["page_number"] == 1


@pytest.mark.parametrize("missing", ["extra", "program"])
def test_a_scan_without_ocr_is_refused_naming_the_extra_and_tesseract(
    missing: str,
    home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What is missing is faked in this process: PDFs are parsed here, not in a worker.
    monkeypatch.setenv("CITEWISE_PARSE_ISOLATION", "off")
    if missing == "extra":
        monkeypatch.setitem(sys.modules, "pytesseract", None)  # as if it were not installed
    else:
        pytesseract = pytest.importorskip("pytesseract")
        monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", str(home / "no-tesseract"))
    (home / "scan.pdf").write_bytes(scanned_pdf(None, [["Vacation policy"]]))
    run(capsys, "kb", "create", "team")
    message = fail(capsys, "doc", "add", str(home / "scan.pdf"), "--kb", "team")
    assert "scan.pdf: the PDF has no text layer" in message
    assert "citewise[ocr]" in message and "tesseract-ocr" in message
    assert run_json(capsys, "doc", "list", "--kb", "team", "--json") == []
    # With text on some pages, those are indexed; the scanned one waits for OCR.
    (home / "mixed.pdf").write_bytes(scanned_pdf("Typed cover page.", [["Vacation policy"]]))
    report = run_json(capsys, "doc", "add", str(home / "mixed.pdf"), "--kb", "team", "--json")
    assert report["added"] == ["mixed.pdf"] and report["chunks"] == 1


def test_a_tagged_figures_alt_text_is_part_of_its_page(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pdf = home / "design.pdf"
    pdf.write_bytes(pdf_with_figure("Architecture overview.", "Diagram of the ingest pipeline"))
    run(capsys, "kb", "create", "team")
    run(capsys, "doc", "add", str(pdf), "--kb", "team")
    hit = search(capsys, "ingest pipeline diagram")
    assert "Architecture overview.\n\n[Image: Diagram of the ingest pipeline]" in str(hit["text"])
