"""`citewise kb …` and `citewise doc …` end to end in a temporary home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.cli import main


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_kb_and_doc_lifecycle(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    guide = home / "guide.md"
    guide.write_text("# Guide\n\n## Keys\n\nSend the API key as a bearer token.\n")
    notes = home / "notes.txt"
    notes.write_text("Version two ships in May.")
    created = json.loads(
        run(capsys, "kb", "create", "team", "--strategy", "parent_child", "--top-k", "2",
            "--search-type", "full_text", "--description", "handbook", "--json")
    )  # fmt: skip
    assert created["strategy"] == "parent_child" and created["retrieval"]["top_k"] == 2
    report = json.loads(run(capsys, "doc", "add", str(guide), str(notes), "--kb", "team", "--json"))
    assert sorted(report["added"]) == ["guide.md", "notes.txt"]
    assert "guide.md" in run(capsys, "doc", "list", "--kb", "team")
    listed = json.loads(run(capsys, "kb", "list", "--json"))
    assert [(kb["name"], kb["documents"]) for kb in listed] == [("team", 2)]
    hits = json.loads(run(capsys, "kb", "search", "team", "bearer token", "--json"))
    assert hits[0]["doc_id"] == "guide.md" and hits[0]["rankers"] == ["keyword"]
    assert "2 chunks deleted" in run(capsys, "doc", "delete", "guide.md", "--kb", "team")
    assert "0 chunks deleted (not in the index)" in run(
        capsys, "doc", "delete", "guide.md", "--kb", "team"
    )
    shown = json.loads(run(capsys, "kb", "show", "team", "--json"))
    assert [d["doc_id"] for d in shown["documents"]] == ["notes.txt"]
    run(capsys, "kb", "delete", "team")
    assert json.loads(run(capsys, "kb", "list", "--json")) == []


def test_errors_are_one_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doc", "add", str(home / "x.md"), "--kb", "missing"]) == 1
    assert "citewise: error:" in capsys.readouterr().err
    assert main(["kb", "create", "x", "--strategy", "qa"]) == 0
    capsys.readouterr()
    doc = home / "a.md"
    doc.write_text("# A\n\ntext")
    assert main(["doc", "add", str(doc), "--kb", "x"]) == 1
    assert "needs a chat model" in capsys.readouterr().err
