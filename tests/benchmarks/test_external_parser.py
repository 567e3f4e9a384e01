"""markitdown as the external parser: a real conversion split into pre-parsed sections that
a knowledge base ingests like any other parser's output."""

from __future__ import annotations

import json

import pytest

from benchmarks.external_parser import markdown_sections, markitdown_document
from tests.kb_support import MakeKB

pytest.importorskip("markitdown", reason="the compare extra is not installed")

PAGE = b"""<html><head><title>Setup</title></head><body>
<h1>Install</h1><p>Run <code>pip install example</code>. <img alt="the installer" src="i.png"></p>
<h2>Limits</h2><table><tr><th>key</th><th>default</th></tr><tr><td>workers</td><td>4</td></tr>
</table></body></html>"""


def test_headings_split_the_markdown_but_not_inside_code() -> None:
    sections = markdown_sections("intro\n# A\ntext\n```\n# not a heading\n```\n## B\nmore")
    assert [(s["heading"], s["level"]) for s in sections] == [("", 1), ("A", 1), ("B", 2)]
    assert "# not a heading" in sections[1]["content"]


def test_a_converted_page_is_ingested_as_pre_parsed_sections(make_kb: MakeKB) -> None:
    document = markitdown_document("setup.html", PAGE, ".html")
    assert document["title"] == "Setup"
    assert [s["heading"] for s in document["sections"]] == ["Install", "Limits"]
    assert "| workers | 4 |" in document["sections"][1]["content"]
    kb = make_kb("external")
    kb.add_upload([], parsed=json.dumps({"documents": [document]}).encode())
    [hit] = kb.search("workers default", search_type="full_text", top_k=1)
    assert hit.chunk.heading_path[-1] == "Limits" and hit.chunk.doc_id == "setup.html"
