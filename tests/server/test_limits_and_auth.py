"""Request bodies are limited (413, the OpenAI envelope); the schema and Swagger follow the
API's keys while the chat page and /healthz load without one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citewise.config import Settings
from citewise.errors import ConfigurationError
from citewise.server import ServerOptions, create_app
from citewise.server.limits import BodyLimits
from citewise.server.testing import running


@pytest.fixture
def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("CITEWISE_MAX_BODY_BYTES", "4096")
    options = ServerOptions(kb="docs", api_keys=frozenset({"sk-test"}))
    app = create_app(Settings(home=tmp_path / "home"), options, model_factory=lambda: None)
    with running(app) as base:
        yield base


KEY = {"Authorization": "Bearer sk-test"}


def test_a_body_over_the_limit_is_refused_before_it_is_read(url: str) -> None:
    body = {"model": "citewise-rag", "input": "x" * 10_000}
    reply = httpx.post(f"{url}/v1/responses", json=body, headers=KEY, timeout=30)
    assert reply.status_code == 413
    error = reply.json()["error"]
    assert error["code"] == "request_too_large" and "4 KiB" in error["message"]
    assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200


def test_a_streamed_body_without_length_is_cut_at_the_limit(url: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"model": "citewise-rag", "input": "'
        for _ in range(20):
            yield b"y" * 1000
        yield b'"}'

    reply = httpx.post(
        f"{url}/v1/responses",
        content=chunks(),
        headers={**KEY, "Content-Type": "application/json"},
        timeout=30,
    )
    assert reply.status_code == 413


def test_a_body_under_the_limit_reaches_the_route(url: str) -> None:
    reply = httpx.post(
        f"{url}/v1/responses", json={"model": "nope", "input": "hi"}, headers=KEY, timeout=30
    )
    assert reply.status_code == 404  # the route ran: an unknown model, not a size problem


def test_the_schema_and_swagger_need_the_key_the_page_does_not(url: str) -> None:
    assert httpx.get(f"{url}/openapi.json", timeout=10).status_code == 401
    assert httpx.get(f"{url}/docs", timeout=10).status_code == 401
    schema = httpx.get(f"{url}/openapi.json", headers=KEY, timeout=10)
    assert schema.status_code == 200 and "/v1/responses" in schema.json()["paths"]
    assert httpx.get(f"{url}/docs", headers=KEY, timeout=10).status_code == 200
    assert httpx.get(f"{url}/", timeout=10).status_code == 200
    assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200


def test_limits_come_from_the_environment_and_bad_values_are_named() -> None:
    limits = BodyLimits.from_env({"CITEWISE_MAX_UPLOAD_BYTES": "100000000"})
    assert limits.of("/v1/knowledge-bases/team/documents") == 100_000_000
    assert limits.of("/v1/responses") == 2 * 1024 * 1024
    with pytest.raises(ConfigurationError, match="CITEWISE_MAX_BODY_BYTES"):
        BodyLimits.from_env({"CITEWISE_MAX_BODY_BYTES": "lots"})


@pytest.fixture
def roomy_url(tmp_path: Path) -> Iterator[str]:
    app = create_app(
        Settings(home=tmp_path / "home"), ServerOptions(kb="docs"), model_factory=lambda: None
    )
    with running(app) as base:
        yield base


def test_a_conversation_is_bounded_in_messages_and_message_size(roomy_url: str) -> None:
    chat = f"{roomy_url}/v1/chat/completions"
    many = [{"role": "user", "content": "hi"}] * 201
    reply = httpx.post(chat, json={"model": "citewise-rag", "messages": many}, timeout=30)
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "messages"
    huge = [{"role": "user", "content": "x" * 100_001}]
    reply = httpx.post(chat, json={"model": "citewise-rag", "messages": huge}, timeout=30)
    error = reply.json()["error"]
    assert reply.status_code == 400 and error["param"] == "messages[0].content"
    assert "100,001 characters" in error["message"]
