"""Per-key rate limiting: off by default; past ``CITEWISE_RATE_LIMIT`` a 429 per key."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from openai import OpenAI, RateLimitError

from citewise.config import Settings
from citewise.errors import ConfigurationError
from citewise.server import ServerOptions, create_app
from citewise.server.ratelimit import rate_limit_from_env
from citewise.server.testing import running


def serve(home: Path) -> object:
    keys = frozenset({"k1", "k2"})
    return create_app(
        Settings(home=home), ServerOptions(kb="t", api_keys=keys), model_factory=lambda: None
    )


def get(url: str, key: str) -> httpx.Response:
    return httpx.get(f"{url}/v1/models", headers={"Authorization": f"Bearer {key}"})


def test_each_key_gets_its_own_limit_and_a_429_in_the_openai_envelope(
    tiny_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWISE_RATE_LIMIT", "3/minute")
    with running(serve(tiny_home)) as url:
        assert [get(url, "k1").status_code for _ in range(3)] == [200, 200, 200]
        refused = get(url, "k1")
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        error = refused.json()["error"]
        assert error["code"] == "rate_limit_exceeded" and "3 per 1 minute" in error["message"]
        assert get(url, "k2").status_code == 200  # another key: its own window
        assert httpx.get(f"{url}/healthz").status_code == 200  # never limited
        with OpenAI(base_url=f"{url}/v1", api_key="k1", max_retries=0) as sdk:
            with pytest.raises(RateLimitError):
                sdk.models.list()


def test_made_up_keys_share_their_sender_s_window(
    tiny_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWISE_RATE_LIMIT", "2/minute")
    with running(serve(tiny_home)) as url:
        statuses = [get(url, f"guess-{n}").status_code for n in range(4)]
        assert statuses == [401, 401, 429, 429]


def test_no_limit_by_default(tiny_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CITEWISE_RATE_LIMIT", raising=False)
    with running(serve(tiny_home)) as url:
        assert {get(url, "k1").status_code for _ in range(20)} == {200}


def test_a_bad_limit_is_named() -> None:
    assert rate_limit_from_env({}) is None
    assert str(rate_limit_from_env({"CITEWISE_RATE_LIMIT": "10/second"})) == "10 per 1 second"
    with pytest.raises(ConfigurationError, match="CITEWISE_RATE_LIMIT must look like 60/minute"):
        rate_limit_from_env({"CITEWISE_RATE_LIMIT": "sixty"})
