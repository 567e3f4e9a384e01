"""`citewise doc add --parsed`: an external parser's output, preferred over the built-in parsers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .support import fail, run, run_json

PARSED = {
    "documents": [
        {
            "id": "report.pdf",
            "metadata": {"title": "Quarterly report", "pages": 3},
            "text": "ignored: the sections are given",
            "sections": [
                {
                    "heading": "Revenue",
                    "level": 1,
                    "page": 1,
                    "content": "Revenue grew by a third.",
                },
                {
                    "heading": "Regions",
                    "level": 2,
                    "page": 2,
                    "content": "| Region | Share |\n| --- | --- |\n| North | 40% |",
                },
            ],
        },
        {"id": "notes.md", "text": "The parsed notes mention the walrus migration."},
    ]
}


def test_parsed_content_is_preferred_over_the_file(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "kb", "create", "team")
    parsed = home / "parsed.json"
    parsed.write_text(json.dumps(PARSED))
    # The same id as a parsed document: the parsed text wins, the file is not parsed.
    notes = home / "notes.md"
    notes.write_text("# Notes\n\nThe raw file talks about penguins.\n")
    report = run_json(
        capsys, "doc", "add", str(notes), "--parsed", str(parsed), "--kb", "team", "--json"
    )
    assert sorted(report["added"]) == ["notes.md", "report.pdf"]
    hits = run_json(
        capsys, "kb", "search", "team", "walrus", "--json", "--search-type", "full_text"
    )
    assert hits[0]["doc_id"] == "notes.md"
    assert run_json(capsys, "kb", "search", "team", "penguins", "--json",
                    "--search-type", "full_text") == []  # fmt: skip
    [hit] = run_json(
        capsys, "kb", "search", "team", "North share", "--json", "--search-type", "full_text"
    )
    assert hit["heading_path"] == ["Quarterly report", "Revenue", "Regions"]
    assert hit["page_number"] == 2 and hit["url"].endswith("report.pdf#page=2")
    assert "| North | 40% |" in hit["text"]


def test_parsed_content_errors(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "kb", "create", "team")
    bad = home / "bad.json"
    bad.write_text(json.dumps({"documents": [{"id": "a.md", "sections": [{"level": 9}]}]}))
    message = fail(capsys, "doc", "add", "--parsed", str(bad), "--kb", "team")
    assert "not parsed content as documented" in message and "level" in message
    hostile = home / "hostile.json"
    hostile.write_text(json.dumps({"id": "../etc/passwd", "text": "x"}))
    assert "invalid document name" in fail(
        capsys, "doc", "add", "--parsed", str(hostile), "--kb", "team"
    )
    # The same 4 MiB limit on parsed text as for the built-in parsers: refused, nothing stored.
    big = home / "big.json"
    big.write_text(json.dumps({"id": "big.md", "text": "word " * (1024 * 1024)}))
    assert "over the 4.0 MiB limit" in fail(
        capsys, "doc", "add", "--parsed", str(big), "--kb", "team"
    )
    assert "nothing to add" in fail(capsys, "doc", "add", "--kb", "team")
    assert run_json(capsys, "doc", "list", "--kb", "team", "--json") == []
