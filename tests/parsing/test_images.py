"""Images in HTML and DOCX: their alt text and captions become part of the section text,
checked through `citewise doc add` and search; decorative images add nothing."""

from __future__ import annotations

import io
from pathlib import Path

import docx
import pytest
from PIL import Image

from citewise.parsing.docx import parse_docx
from citewise.parsing.html import parse_html
from tests.cli.support import run, run_json

PAGE = """<html><body><main><h1>Vision</h1><h2>Placeholders</h2>
<p>Without a vision model the alt text stays: <img src="data:image/png;base64,AAAA"
 alt="Architecture diagram with OCR and captions"/> done.</p>
<figure><img src="flow.png" title="Flow chart of the uploads"><figcaption>Figure 2: how an
upload is indexed</figcaption></figure>
<p><img src="spacer.gif" alt=""> Decoration only.</p></main></body></html>"""


def docx_with_picture(description: str, caption: str) -> bytes:
    document = docx.Document()
    document.add_heading("Design", level=1)
    document.add_paragraph("The overview follows.")
    png = io.BytesIO()
    Image.new("RGB", (40, 30), "navy").save(png, "PNG")
    png.seek(0)
    document.add_picture(png)
    # Word keeps a picture's alt text in wp:docPr/@descr; python-docx has no API for it.
    picture = document.inline_shapes[0]._inline
    picture.docPr.set("descr", description)
    document.add_paragraph(caption, style="Caption")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_html_alt_text_titles_and_captions_are_section_text() -> None:
    [section] = parse_html(PAGE, doc_id="vision.html", site_url="", version=None)[1:]
    assert section.text == (
        "Without a vision model the alt text stays: "
        "[Image: Architecture diagram with OCR and captions] done.\n\n"
        "[Image: Flow chart of the uploads]\n\n"
        "Figure 2: how an upload is indexed\n\n"
        "Decoration only."
    )


def test_docx_picture_descriptions_and_captions_are_section_text() -> None:
    data = docx_with_picture("Sequence diagram of a search", "Figure 1: searching")
    [section] = parse_docx(data, doc_id="design.docx", site_url="", version=None)
    assert section.text == (
        "The overview follows.\n\n[Image: Sequence diagram of a search]\n\nFigure 1: searching"
    )


def test_images_are_found_by_what_they_show(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "vision.html").write_text(PAGE)
    (home / "design.docx").write_bytes(docx_with_picture("Sequence diagram of a search", "Fig. 1"))
    run(capsys, "kb", "create", "team")
    run(capsys, "doc", "add", str(home / "vision.html"), str(home / "design.docx"), "--kb", "team")

    def best(query: str) -> str:
        hits = run_json(
            capsys, "kb", "search", "team", query, "--json", "--search-type", "full_text"
        )
        return str(hits[0]["doc_id"])

    assert best("architecture diagram OCR") == "vision.html"
    assert best("flow chart uploads") == "vision.html"
    assert best("sequence diagram") == "design.docx"
