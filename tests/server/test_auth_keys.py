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
