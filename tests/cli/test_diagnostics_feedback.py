"""`citewise diagnostics` shows the readers' feedback of the local home: the helpful rate per
window and the worst-rated questions in its text, ``feedback`` in ``--json`` and ``--export``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.cli import main
from citewise.kb.feedback import FEEDBACK_FILE, FeedbackStore
from citewise.models import Answer, Citation


def test_the_cli_prints_and_exports_the_feedback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CITEWISE_HOME", str(home))
    url = "https://docs.example/guide/#add-api-keys"
    text = f"See [Add API keys]({url})."
    answer = Answer(text, (Citation(url, "Add API keys", 4, len(text) - 1),), (), "generated")
    store = FeedbackStore(home / FEEDBACK_FILE)
    for n, rating in enumerate(["down", "up", "down"]):
        store.remember(f"resp_{n}", answer, kb="docs", workflow="citewise-rag",
                       question="How do I add API keys?")  # fmt: skip
        store.rate(f"resp_{n}", rating)

    assert main(["diagnostics"]) == 0
    out = capsys.readouterr().out
    assert "feedback: helpful 1h 33% of 3" in out
    assert "2 down, 1 up  [docs] #" in out and url in out
    assert main(["diagnostics", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["feedback"]["windows"]["all"]["down"] == 2
    exported = tmp_path / "export.json"
    assert main(["diagnostics", "--export", str(exported)]) == 0
    assert len(json.loads(exported.read_text())["feedback"]["data"]) == 3
