"""The chat page's thumbs and comment in headless Chromium: the rating reaches
``/v1/feedback`` with the answer's sections, and the page still shows it after a reload."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script

from .conftest import cite_first
from .docs_site import KB, index_docs
from .test_web import CHROMIUM, WEB_TESTS, browser_or_skip


@pytest.mark.browser
def test_an_answer_is_rated_on_the_chat_page_and_stays_rated(tmp_path: Path) -> None:
    node = browser_or_skip()
    home = tmp_path / "home"
    index_docs(home, "https://docs.example/", tmp_path)
    app = create_app(
        Settings(home=home),
        ServerOptions(kb=KB),
        model_factory=lambda: ScriptedChatModel(reply=script(answer=cite_first)),
    )
    with running(app) as url:
        run = subprocess.run(
            [node, "chat_rating.mjs", url, "How do I add API keys?"],
            cwd=WEB_TESTS, capture_output=True, text=True, timeout=300,
            env={**os.environ, "CHROMIUM": CHROMIUM},
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        seen = json.loads(run.stdout.strip().splitlines()[-1])
        feedback = httpx.get(f"{url}/v1/feedback").json()

    assert seen["pageErrors"] == []
    assert seen["buttons"] == [
        {"label": "Helpful", "pressed": "false"},
        {"label": "Not helpful", "pressed": "false"},
    ]
    assert seen["note"] == "Thanks for the feedback."
    assert seen["afterReload"] == ["true", "false"] and seen["citations"] >= 1
    [rating] = feedback["data"]
    assert rating["rating"] == "up" and rating["comment"] == "Exactly what I needed"
    assert rating["response_id"].startswith("resp_")
    assert rating["answer"]["sections"][0]["url"] == "https://docs.example/guide/#add-api-keys"
