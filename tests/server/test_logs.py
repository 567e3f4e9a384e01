"""Request logs: one line per request with its request id, and the cause of every failure (the
chat model's error, the release URL that failed); JSON off a terminal, readable on one."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from citewise.config import Settings
from citewise.errors import ConfigurationError
from citewise.server import ServerOptions, create_app
from citewise.server.logs import configure_logging
from citewise.server.testing import running
from citewise.sources.release import ReleaseSpec

from .conftest import FAIL

QUESTION = "How do I add API key authentication?"


class Captured(io.StringIO):
    """The log stream: not a terminal, so lines are JSON."""

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.getvalue().splitlines() if line.strip()]

    def requests(self) -> list[dict[str, Any]]:
        return [line for line in self.lines() if line["logger"] == "citewise.request"]

    def request(self, request_id: str) -> dict[str, Any]:
        """The line of ``request_id``, waiting for it: the server logs a request after its
        last byte went out, so the client may see the response first."""
        deadline = time.monotonic() + 10
        while True:
            found = [line for line in self.requests() if line.get("request_id") == request_id]
            if found or time.monotonic() > deadline:
                (line,) = found
                return line
            time.sleep(0.01)


@pytest.fixture
def log() -> Iterator[Captured]:
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    stream = Captured()
    handler = configure_logging("info", stream=stream)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        assert root.handlers == handlers


def test_a_failing_chat_model_is_logged_with_its_cause_and_request_id(
    scripted_url: str, log: Captured
) -> None:
    url = f"{scripted_url}/v1/responses"
    body = {"model": "citewise-rag", "input": f"{FAIL} {QUESTION}"}
    refused = httpx.post(url, json=body, headers={"X-Request-ID": "req-model-502"}, timeout=60)
    assert refused.status_code == 502 and refused.headers["X-Request-ID"] == "req-model-502"
    streamed = httpx.post(url, json={**body, "stream": True}, timeout=60)
    assert "response.failed" in streamed.text
    generated = streamed.headers["X-Request-ID"]
    assert len(generated) == 32

    failed = log.request("req-model-502")
    assert (failed["level"], failed["status"], failed["route"]) == ("error", 502, "/v1/responses")
    assert "scripted outage" in failed["cause"] and failed["model"] == "citewise-rag"
    mid_stream = log.request(generated)
    assert mid_stream["status"] == 200 and mid_stream["level"] == "error"
    assert "the chat model failed: scripted outage" in mid_stream["cause"]
    assert mid_stream["duration_ms"] > 0 and mid_stream["method"] == "POST"
    # The question is not logged: only the route, the status and the cause.
    assert QUESTION not in log.getvalue()


def test_an_unreachable_release_is_logged_with_its_url(tmp_path: Path, log: Captured) -> None:
    spec = ReleaseSpec.parse("acme/docs@1.0", site_url="http://127.0.0.1:9/")
    app = create_app(
        Settings(home=tmp_path), ServerOptions(release=spec), model_factory=lambda: None
    )
    with running(app) as url:
        response = httpx.post(
            f"{url}/v1/responses",
            json={"model": "citewise-rag", "input": QUESTION},
            headers={"X-Request-ID": "req-release"},
            timeout=60,
        )
    assert response.status_code >= 500
    line = log.request("req-release")
    assert line["level"] == "error" and "http://127.0.0.1:9/versions.json" in line["cause"]


def test_a_request_logs_one_line_and_an_unsafe_request_id_is_replaced(
    extractive_url: str, log: Captured
) -> None:
    ok = httpx.get(f"{extractive_url}/v1/models", headers={"X-Request-ID": "bad id\twith space"})
    assert ok.status_code == 200
    rid = ok.headers["X-Request-ID"]
    assert rid != "bad id\twith space" and len(rid) == 32
    missing = httpx.get(f"{extractive_url}/v1/nope", headers={"X-Request-ID": "abc.123"})
    assert missing.headers["X-Request-ID"] == "abc.123"
    lines = {"abc.123": log.request("abc.123"), rid: log.request(rid)}
    assert lines[rid]["level"] == "info" and lines[rid]["route"] == "/v1/models"
    assert "cause" not in lines[rid]
    assert lines["abc.123"]["level"] == "warning" and lines["abc.123"]["status"] == 404
    assert lines["abc.123"]["cause"] == "no route /v1/nope"
    assert lines["abc.123"]["route"] == "unmatched" and lines["abc.123"]["path"] == "/v1/nope"


def test_a_terminal_gets_readable_lines_and_the_level_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    root = logging.getLogger()
    level = root.level
    monkeypatch.setenv("CITEWISE_LOG_LEVEL", "warning")
    terminal = Terminal()
    handler = configure_logging(stream=terminal)
    try:
        assert root.level == logging.WARNING
        logging.getLogger("citewise.test").info("not shown")
        logging.getLogger("citewise.test").warning("shown")
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    (line,) = terminal.getvalue().splitlines()
    assert line.endswith("WARNING citewise.test shown") and not line.startswith("{")
    monkeypatch.setenv("CITEWISE_LOG_LEVEL", "loud")
    with pytest.raises(ConfigurationError, match="CITEWISE_LOG_LEVEL"):
        configure_logging(stream=terminal)


def test_a_parser_error_is_logged_with_the_file_it_names(tmp_path: Path, log: Captured) -> None:
    settings = Settings(home=tmp_path)
    app = create_app(settings, ServerOptions(kb="files"), model_factory=lambda: None)
    with running(app) as url:
        assert httpx.post(f"{url}/v1/knowledge-bases", json={"name": "files"}).is_success
        response = httpx.post(
            f"{url}/v1/knowledge-bases/files/documents",
            files={"files": ("broken.docx", b"not a docx at all")},
            headers={"X-Request-ID": "req-parse"},
        )
        assert response.status_code == 400
        assert httpx.get(f"{url}/healthz").status_code == 200
    line = log.request("req-parse")
    assert line["level"] == "warning" and line["route"] == "/v1/knowledge-bases/{kb}/documents"
    assert "broken.docx" in line["cause"]
    assert not [line for line in log.requests() if line["route"] == "/healthz"]  # debug only
