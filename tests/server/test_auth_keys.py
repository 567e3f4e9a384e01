"""Keys given in any collection guard the API: a tuple must never turn authentication off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    options = ServerOptions(kb="docs", api_keys=("sk-tuple",))  # type: ignore[arg-type]
    app = create_app(Settings(home=tmp_path / "home"), options, model_factory=lambda: None)
    with running(app) as base:
        yield base


def test_keys_in_a_tuple_are_enforced(url: str) -> None:
    assert httpx.get(f"{url}/v1/models", timeout=10).status_code == 401
    headers = {"Authorization": "Bearer sk-tuple"}
    assert httpx.get(f"{url}/v1/models", headers=headers, timeout=10).status_code == 200


def test_a_user_key_on_an_admin_route_is_told_an_admin_key_is_needed(tmp_path: Path) -> None:
    options = ServerOptions(api_keys=frozenset({"sk-user"}), admin_keys=frozenset({"sk-admin"}))
    app = create_app(Settings(home=tmp_path / "home"), options, model_factory=lambda: None)
    with running(app) as base:
        user = httpx.get(f"{base}/v1/knowledge-bases", headers={"Authorization": "Bearer sk-user"})
        wrong = httpx.get(f"{base}/v1/knowledge-bases", headers={"Authorization": "Bearer nope"})
        admin = httpx.get(
            f"{base}/v1/knowledge-bases", headers={"Authorization": "Bearer sk-admin"}
        )
    assert user.status_code == 403
    assert user.json()["error"]["message"].startswith("admin key required")
    assert wrong.status_code == 401 and wrong.json()["error"]["message"] == "invalid admin key"
    assert admin.status_code == 200
