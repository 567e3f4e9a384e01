"""The chat page in headless Chromium (Debian's chromium, driven by node + playwright-core)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from .conftest import FAIL

WEB_TESTS = Path(__file__).resolve().parents[1] / "web"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
QUESTION = "How do I add API key authentication?"


def browser_or_skip() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the chat page's browser test needs node")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set CHROMIUM)")
    if not (WEB_TESTS / "node_modules" / "playwright-core").is_dir():
        pytest.skip(f"playwright-core is not installed: run npm ci in {WEB_TESTS}")
    return node


def test_the_page_serves_without_a_build_step(scripted_url: str) -> None:
    page = httpx.get(scripted_url)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert '<script src="/web/app.js">' in page.text
    script = httpx.get(f"{scripted_url}/web/app.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert "/v1/responses" in script.text
    assert httpx.get(f"{scripted_url}/web/../app.py").status_code == 404


def test_ask_see_statuses_answer_and_a_working_citation(
    scripted_url: str, lgos_scopes: tuple[str, ...], tmp_path: Path
) -> None:
    node = browser_or_skip()
    # Kept as an artifact: CITEWISE_ARTIFACTS names a folder to keep it in.
    artifacts = Path(os.environ.get("CITEWISE_ARTIFACTS", tmp_path))
    artifacts.mkdir(parents=True, exist_ok=True)
    screenshot = artifacts / "web-chat.png"
    run = subprocess.run(
        [node, "chat.mjs", scripted_url, str(screenshot), QUESTION, f"{FAIL} {QUESTION}"],
        cwd=WEB_TESTS,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CHROMIUM": CHROMIUM},
    )
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])

    assert seen["scopes"] == list(lgos_scopes)  # the scope selector comes from the schema
    assert seen["models"] == ["citewise-rag", "citewise-agentic"]
    assert seen["firstStatus"] == "Understanding the question"
    assert seen["statuses"] == [
        "Understanding the question",
        f"Searching the docs: {QUESTION}",
        "Writing the answer",
    ]
    (citation,) = seen["citations"]
    assert citation["href"].startswith("https://ilkersigirci.github.io/langgraph-openai-serve/")
    # The link shows the section's title, not the Markdown around it.
    assert (
        seen["answer"]
        == f"Use the middleware described in {citation['text']}. Then restart the server."
    )
    assert seen["sources"] == [citation["href"]]
    assert seen["opened"] == {"url": citation["href"], "heading": "docs page"}
    assert "scripted outage" in seen["error"]
    assert screenshot.stat().st_size > 10_000
