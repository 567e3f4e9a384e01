"""Pre-parsed content (an external parser's JSON) as sections, and its documented schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from citewise.errors import SourceError
from citewise.parsing.preparsed import PARSED_SCHEMA, parse_parsed, parsed_sections

DOCS = Path(__file__).resolve().parents[2] / "docs" / "knowledge-bases.md"


def test_sections_nest_by_level_under_the_title_with_anchors() -> None:
    [document] = parse_parsed(
        json.dumps(
            {
                "id": "./guide/setup.html",
                "metadata": {"title": "Setup guide", "author": "ops"},
                "sections": [
                    {"heading": "Install", "level": 1, "content": "pip install it"},
                    {"heading": "Linux", "level": 2, "content": "apt"},
                    {"heading": "Install", "level": 1, "content": "again", "kind": "extra"},
                ],
            }
        )
    )
    assert document.id == "guide/setup.html"
    sections = parsed_sections(document, site_url="https://d.example/", scope="ops")
    assert [s.heading_path for s in sections] == [
        ("Setup guide", "Install"),
        ("Setup guide", "Install", "Linux"),
        ("Setup guide", "Install"),
    ]
    assert [s.anchor for s in sections] == ["install", "linux", "install_1"]
    assert sections[1].url == "https://d.example/guide/setup.html#linux"
    assert {s.scope for s in sections} == {"ops"} and sections[0].page_number is None


def test_a_list_of_documents_and_text_only_documents() -> None:
    documents = parse_parsed(b'[{"id": "a.txt", "text": "Alpha."}, {"id": "b.md", "text": " "}]')
    [section] = parsed_sections(documents[0])
    assert section.heading_path == ("A",) and section.text == "Alpha." and section.anchor == ""
    with pytest.raises(SourceError, match="b.md: the parsed document has neither"):
        parsed_sections(documents[1])
    with pytest.raises(SourceError, match="the same document id appears twice"):
        parse_parsed(b'[{"id": "a.txt", "text": "x"}, {"id": "./a.txt", "text": "y"}]')
    with pytest.raises(SourceError, match="documents: List should have at least 1 item"):
        parse_parsed(b'{"documents": []}')


def test_the_documented_schema_is_the_one_validated() -> None:
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)\n```", text, re.DOTALL)
    assert json.loads(blocks[-1]) == PARSED_SCHEMA
    # The example in the docs is valid parsed content.
    [example] = parse_parsed(blocks[0])
    assert [s.page_number for s in parsed_sections(example)] == [1, 2]
