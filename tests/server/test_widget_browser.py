"""The widget in headless Chromium: a docs site on another localhost port embeds
``/widget.js`` with a widget key; at 390 px wide the reader opens it from the keyboard, asks,
sees the answer stream, rates it, and follows a citation to the section's anchor in the same
tab; the rating is then on citewise's diagnostics page, in its export and in /metrics."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest
from limits import parse

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.server.widget import WidgetKeys
from citewise.testing import ScriptedChatModel, script

from .conftest import cite_first
from .docs_site import KB, SECTION_ANCHOR, index_docs, serving, write_pages
from .test_web import CHROMIUM, WEB_TESTS, browser_or_skip

API = "secret-api-key"
WIDGET = "pub-widget-key"
QUESTION = "How do I add API keys?"


@pytest.mark.browser
def test_a_reader_asks_the_widget_rates_and_lands_on_the_cited_section(tmp_path: Path) -> None:
    node = browser_or_skip()
    shots = Path(os.environ.get("CITEWISE_ARTIFACTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    site = tmp_path / "site"
    site.mkdir()
    with serving(site) as docs:
        home = tmp_path / "home"
        index_docs(home, f"{docs}/", tmp_path)
        app = create_app(
            Settings(home=home),
            ServerOptions(kb=KB, api_keys=frozenset({API})),
            model_factory=lambda: ScriptedChatModel(reply=script(answer=cite_first)),
            widget_keys=WidgetKeys({WIDGET: KB}, frozenset({docs}), parse("20/minute")),
        )
        with running(app) as citewise:
            tag = f'<script src="{citewise}/widget.js" data-kb="{KB}" data-key="{WIDGET}"></script>'
            write_pages(site, tag)
            run = subprocess.run(
                [node, "widget.mjs", docs, citewise, API, QUESTION, str(shots)],
                cwd=WEB_TESTS, capture_output=True, text=True, timeout=300,
                env={**os.environ, "CHROMIUM": CHROMIUM},
            )  # fmt: skip
            assert run.returncode == 0, run.stderr
            seen = json.loads(run.stdout.strip().splitlines()[-1])
            auth = {"Authorization": f"Bearer {API}"}
            export = httpx.get(f"{citewise}/v1/diagnostics/export", headers=auth).json()
            metrics = httpx.get(f"{citewise}/metrics", headers=auth).text

    assert seen["pageErrors"] == [] and seen["consoleErrors"] == []
    # Keyboard and ARIA: a dialog, focus inside it, Escape closes it and refocuses the button.
    assert seen["launcherLabel"] == "Ask" and seen["expanded"] == "true"
    assert seen["dialog"]["role"] == "dialog" and seen["dialog"]["modal"] == "true"
    assert seen["dialog"]["label"] == "Ask the docs"
    assert seen["dialog"]["width"] == 390  # the whole width of a narrow screen
    assert seen["focusedOnOpen"] == "TEXTAREA" and seen["focusTrapped"]
    assert seen["closedByEscape"] and seen["focusBack"] == "launcher"
    # Streamed, rendered, cited.
    assert seen["answerType"].startswith("text/event-stream")
    assert seen["renders"] > 1
    assert "Then restart the server." in seen["answer"]
    section = f"{docs}/guide/#{SECTION_ANCHOR}"
    assert seen["citation"]["href"] == section and seen["citation"]["target"] is None
    assert seen["sources"] == [{"href": section, "target": None}]
    # The citation opened the section in the same tab, scrolled to its anchor.
    assert seen["landed"] == section and seen["samePage"]
    assert seen["target"]["text"] == "Add API keys" and 0 <= seen["target"]["top"] < 100
    # The rating, on the diagnostics page, in its export and in /metrics.
    assert seen["pressed"] == "true"
    assert seen["diagnostics"]["summary"] == "1 rating kept (at most 500)"
    assert seen["diagnostics"]["hour"] == ["1h", "1", "0", "1", "0%"]
    assert seen["diagnostics"]["worst"][1:4] == [KB, "1", "0"]
    assert seen["diagnostics"]["sections"] == [section]
    [rating] = export["feedback"]["data"]
    assert rating["rating"] == "down"
    assert rating["comment"] == "It does not say where to set the keys"
    # Thumb, then comment: one rating, counted once.
    assert f'citewise_feedback_total{{kb="{KB}",rating="down"}} 1.0' in metrics
    # Light and dark follow the page.
    assert seen["darkOnLight"] is False and seen["darkOnDark"] is True


def test_the_widget_script_is_one_scope_with_the_chat_pages_parts(tmp_path: Path) -> None:
    app = create_app(Settings(home=tmp_path / "home"), ServerOptions(kb=KB))
    with running(app) as url:
        script_file = httpx.get(f"{url}/widget.js")
    assert script_file.status_code == 200
    assert script_file.headers["content-type"].startswith("text/javascript")
    text = script_file.text
    assert text.startswith("/* citewise widget") and text.rstrip().endswith("})();")
    chat_page = WEB_TESTS.parents[1] / "src/citewise/server/web"
    for part in ("render.js", "sse.js", "rating.js"):
        assert (chat_page / part).read_text() in text  # the chat page's own code, not a copy
    assert "attachShadow" in text and "DOMPurify" in text
