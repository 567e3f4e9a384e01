"""The diagnostics page in headless Chromium (Debian's chromium, driven by node +
playwright-core, like the chat page's test)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script

from .conftest import FAIL, cite_first, client
from .test_web import CHROMIUM, WEB_TESTS, browser_or_skip

QUESTION = "How do I add API key authentication?"
KEY = "admin-secret"


@pytest.fixture
def url(lgos_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A keyed server over the LGOS docs with a history of its own (a fresh home holding a
    link to the LGOS knowledge base), alerting from two answers."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "kb").symlink_to(lgos_home / "kb", target_is_directory=True)
    monkeypatch.setenv("CITEWISE_ALERT_MIN_EVENTS", "2")
    model = ScriptedChatModel(reply=script(answer=cite_first))
    app = create_app(Settings(home=home), ServerOptions(kb="lgos"), model_factory=lambda: model)
    app.state.admin_keys = frozenset({KEY})
    app.state.api_keys = frozenset({"user-key"})
    with running(app) as url:
        yield url


def test_the_page_shows_operations_stages_alerts_and_exports(url: str, tmp_path: Path) -> None:
    node = browser_or_skip()
    with client(url, KEY) as sdk:
        sdk.responses.create(model="citewise-rag", input=QUESTION)
        for _ in range(2):
            list(sdk.responses.create(model="citewise-rag", input=FAIL, stream=True))
    artifacts = Path(os.environ.get("CITEWISE_ARTIFACTS", tmp_path))
    artifacts.mkdir(parents=True, exist_ok=True)
    screenshot = artifacts / "web-diagnostics.png"
    run = subprocess.run(
        [node, "diagnostics.mjs", url, str(screenshot), KEY],
        cwd=WEB_TESTS,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CHROMIUM": CHROMIUM},
    )
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])

    assert "needs a key" in seen["needsKey"] and seen["keyShown"] and seen["errorHidden"]
    assert seen["summary"].startswith("6 operations in the last 5m")  # 3 answers, 3 searches
    (alert,) = seen["alerts"]
    assert alert["alert"] == "error_rate"
    assert alert["text"].startswith("answer: 67% failed (> 20%) over the last 5m")
    operations = {
        row["cells"][0]: row["cells"] for row in seen["rows"] if row["kind"] == "operation"
    }
    assert operations["answer"][1:4] == ["3", "0.60", "67%"]
    assert operations["search"][4] == "0%"
    stages = [row["cells"][0] for row in seen["rows"] if row["kind"] == "stage"]
    assert {"plan", "search", "generate", "dense", "keyword"} <= set(stages)
    # Issue 34: means beside the percentiles, the window's quality, the newest events hashed.
    assert operations["answer"][5] not in ("", "–")  # mean ms
    assert seen["quality"].startswith("Top-K fill ") and "citation coverage 100%" in seen["quality"]
    assert "(3 searches, 1 answers)" in seen["quality"]
    assert len(seen["recent"]) == 6 and {row[1] for row in seen["recent"]} == {"search", "answer"}
    assert all(QUESTION not in " ".join(row) for row in seen["recent"])
    assert seen["hourSummary"].startswith("6 operations in the last 1h")
    assert seen["download"].startswith("citewise-diagnostics-") and seen["exported"] == 6
    assert seen["afterClear"].startswith("0 operations")
    assert screenshot.stat().st_size > 10_000
