"""CORS: off unless ``CITEWISE_CORS_ORIGINS`` lists the origins allowed to call the API."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.app import cors_origins
from citewise.server.testing import running

PREFLIGHT = {
    "Origin": "https://docs.example",
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type",
}


def serve(home: Path) -> object:
    return create_app(
        Settings(home=home),
        ServerOptions(kb="t", api_keys=frozenset({"k1"})),
        model_factory=lambda: None,
    )


def test_without_origins_no_cors_headers_are_sent(
    tiny_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CITEWISE_CORS_ORIGINS", raising=False)
    with running(serve(tiny_home)) as url:
        response = httpx.get(f"{url}/healthz", headers={"Origin": "https://docs.example"})
        assert "access-control-allow-origin" not in response.headers
        preflight = httpx.options(f"{url}/v1/responses", headers=PREFLIGHT)
        assert "access-control-allow-origin" not in preflight.headers


def test_a_listed_origin_gets_cors_and_still_needs_the_key(
    tiny_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWISE_CORS_ORIGINS", "https://docs.example, https://b.example/")
    with running(serve(tiny_home)) as url:
        preflight = httpx.options(f"{url}/v1/responses", headers=PREFLIGHT)
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://docs.example"
        denied = httpx.get(f"{url}/v1/knowledge-bases", headers={"Origin": "https://docs.example"})
        assert denied.status_code == 401
        assert denied.headers["access-control-allow-origin"] == "https://docs.example"
        other = httpx.options(
            f"{url}/v1/responses", headers={**PREFLIGHT, "Origin": "https://evil.example"}
        )
        assert other.status_code == 400
        assert "access-control-allow-origin" not in other.headers


def test_origins_are_read_comma_separated() -> None:
    assert cors_origins({}) == []
    assert cors_origins({"CITEWISE_CORS_ORIGINS": " * "}) == ["*"]
    assert cors_origins({"CITEWISE_CORS_ORIGINS": "https://a.example/,,http://b:8"}) == [
        "https://a.example",
        "http://b:8",
    ]
