"""`citewise index` on a folder of every format, and the size limits on the way in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import citewise.kb.ingest as ingest_module
from citewise.cli import main
from citewise.config import Limits, ParseSettings, Settings
from citewise.errors import TooLargeError
from citewise.kb import KnowledgeBase
from citewise.parsing.source import parse_file
from citewise.sources import SourceFile
from tests.parsing.files import OutlineItem, make_docx, make_pdf

SITE = "https://docs.example/"


def write_mixed(folder: Path) -> None:
    (folder / "manuals").mkdir(parents=True)
    (folder / "index.md").write_text("# Home\n\nWelcome to the gizmo knowledge base.\n")
    (folder / "faq.html").write_text(
        "<html><body><nav>Menu</nav><main><h1>FAQ</h1>"
        "<h2 id='reset'>Resetting</h2><p>Hold the red button for ten seconds.</p>"
        "</main><footer>Copyright</footer></body></html>"
    )
    pages = [
        ["1 Safety", "Never submerge the gizmo in water."],
        ["2 Charging", "Charge the battery with the yellow cable overnight."],
    ]
    outline = [OutlineItem("1 Safety", 0), OutlineItem("2 Charging", 1)]
    (folder / "manuals" / "gizmo.pdf").write_bytes(make_pdf(pages, outline, "Gizmo Manual"))
    (folder / "manuals" / "handbook.docx").write_bytes(make_docx())
    (folder / "notes.txt").write_text("The firmware update fixes the flickering display.\n")
    (folder / "parts.csv").write_text('part,price\nflux capacitor,"1,210.00"\nsprocket,3.50\n')


def index(capsys: pytest.CaptureFixture[str], folder: Path) -> dict[str, Any]:
    assert main(["index", str(folder), "--kb", "mixed", "--site-url", SITE, "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_index_a_folder_of_every_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CITEWISE_HOME", str(home))
    docs = tmp_path / "docs"
    write_mixed(docs)

    report = index(capsys, docs)
    files = [
        "faq.html",
        "index.md",
        "manuals/gizmo.pdf",
        "manuals/handbook.docx",
        "notes.txt",
        "parts.csv",
    ]
    assert sorted(report["added"]) == files

    kb = KnowledgeBase("mixed", settings=Settings(home=home))
    assert sorted(doc.doc_id for doc in kb.documents()) == files

    def best(query: str) -> tuple[str, int | None, str]:
        hit = kb.search(query, top_k=1)[0]
        return hit.url, hit.chunk.page_number, hit.chunk.text

    url, page_number, text = best("how do I charge the battery with the yellow cable")
    assert (url, page_number) == (f"{SITE}manuals/gizmo.pdf#page=2", 2)
    assert text.startswith("Gizmo Manual > 2 Charging\n\n")
    assert best("hold the red button to reset")[0] == f"{SITE}faq.html#reset"
    assert best("WIDGET_HOME data folder")[0] == f"{SITE}manuals/handbook.docx#configuration"
    assert best("flickering display firmware")[0] == f"{SITE}notes.txt"
    url, _, text = best("flux capacitor price")
    assert url == f"{SITE}parts.csv"
    assert "| flux capacitor | 1,210.00 |" in text
    assert "Copyright" not in best("copyright menu")[2]

    again = index(capsys, docs)
    assert sorted(again["unchanged"]) == files
    assert again["chunks_embedded"] == 0

    pages = [["1 Safety", "Keep it dry."], ["2 Charging", "Use the yellow cable."]]
    (docs / "manuals" / "gizmo.pdf").write_bytes(make_pdf(pages, [OutlineItem("1 Safety", 0)]))
    third = index(capsys, docs)
    assert third["updated"] == ["manuals/gizmo.pdf"]


def test_a_file_over_the_limit_stops_indexing_and_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CITEWISE_HOME", str(home))
    docs = tmp_path / "docs"
    write_mixed(docs)
    # The operator's setting: 2,097 bytes (the PDF and DOCX are bigger).
    monkeypatch.setenv("CITEWISE_MAX_FILE_MB", "0.002")
    assert main(["index", str(docs), "--kb", "mixed"]) == 1
    error = capsys.readouterr().err
    assert "handbook.docx: file is" in error and "over the 2.0 KiB limit" in error
    assert not KnowledgeBase("mixed", settings=Settings(home=home)).exists


def test_a_bad_limit_setting_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CITEWISE_HOME", str(home))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nSmall page.\n")
    monkeypatch.setenv("CITEWISE_MAX_FILE_MB", "lots")
    assert main(["index", str(docs), "--kb", "k"]) != 0
    assert "CITEWISE_MAX_FILE_MB must be a positive number, not 'lots'" in capsys.readouterr().err
    assert not KnowledgeBase("k", settings=Settings(home=home)).exists
    monkeypatch.setenv("CITEWISE_MAX_FILE_MB", "1")
    assert main(["index", str(docs), "--kb", "k"]) == 0


def test_parsed_text_over_the_limit_is_refused_before_chunking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nSmall page.\n")
    kb = KnowledgeBase("kb", settings=Settings(home=home))
    kb.index_folder(docs)
    before = kb.store.chunk_ids()

    # A 1.9 KiB CSV makes more than 2 KiB of table text: the bytes pass, the text does not.
    (docs / "wide.csv").write_text("a,b,c,d\n" + "1,2,3,4\n" * 240)
    tight = ParseSettings(limits=Limits(max_file_bytes=2000, max_text_bytes=2048))
    kb = KnowledgeBase("kb", settings=Settings(home=home, parse=tight))

    def no_chunking(*args: object, **kwargs: object) -> None:
        raise AssertionError("chunked text over the limit")

    monkeypatch.setattr(ingest_module, "chunk_sections", no_chunking)
    with pytest.raises(TooLargeError, match=r"wide\.csv: parsed text is over the 2\.0 KiB"):
        kb.index_folder(docs)
    assert kb.store.chunk_ids() == before
    assert [doc.doc_id for doc in kb.documents()] == ["a.md"]


def test_the_real_text_limit_is_4_mib_of_parsed_text(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    limit = Limits().max_text_bytes
    fits = SourceFile("big.txt", path, "x" * limit)
    assert len(parse_file(fits, site_url="", version=None)[0].text) == limit
    over = SourceFile("big.txt", path, "x" * (limit + 1))
    with pytest.raises(TooLargeError, match=r"big\.txt: parsed text is over the 4\.0 MiB"):
        parse_file(over, site_url="", version=None)


def test_parse_file_refuses_an_oversized_source_that_skipped_the_folder_reader(
    tmp_path: Path,
) -> None:
    data = b"%PDF" + b"\0" * Limits().max_file_bytes
    upload = SourceFile("up.pdf", tmp_path / "up.pdf", data=data, binary=True)
    with pytest.raises(TooLargeError, match=r"up\.pdf: file is more than the 16\.0 MiB limit"):
        parse_file(upload, site_url="", version=None)
