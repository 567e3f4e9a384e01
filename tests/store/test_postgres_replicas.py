"""Two server replicas sharing one PostgreSQL store: uploads through one, searched through the
other at once; concurrent uploads to one knowledge base through both lose nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from tests import pg

ADMIN = {"Authorization": "Bearer admin-secret"}


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    url = pg.fresh_url()
    options = ServerOptions(kb="docs", admin_keys=frozenset({"admin-secret"}))
    with ExitStack() as stack:
        clients = []
        for name in ("a", "b"):
            # Separate homes (embedding caches): only the store is shared.
            settings = Settings(home=tmp_path / name, store_url=url)
            app = create_app(settings, options, model_factory=lambda: None)
            base = stack.enter_context(running(app))
            clients.append(
                stack.enter_context(httpx.Client(base_url=base, headers=ADMIN, timeout=120))
            )
        yield clients[0], clients[1]
    pg.drop_schema(url)


def _upload(api: httpx.Client, name: str, text: str) -> None:
    response = api.post(
        "/v1/knowledge-bases/docs/documents", files=[("files", (name, text.encode(), "text/plain"))]
    )
    assert response.status_code == 200, response.text


def _search(api: httpx.Client, query: str) -> list[str]:
    found = api.post(
        "/v1/knowledge-bases/docs/search",
        json={"query": query, "top_k": 50, "search_type": "full_text"},
    )
    assert found.status_code == 200, found.text
    return [hit["doc_id"] for hit in found.json()["data"]]


def test_an_upload_through_one_replica_is_searchable_through_the_other(
    replicas: tuple[httpx.Client, httpx.Client],
) -> None:
    a, b = replicas
    assert a.post("/v1/knowledge-bases", json={"name": "docs"}).status_code == 201
    assert b.post("/v1/knowledge-bases", json={"name": "docs"}).status_code == 409
    _upload(a, "keys.txt", "Send the API key as a bearer token.")
    assert _search(b, "bearer token") == ["keys.txt"]
    _upload(b, "keys.txt", "Keys now travel in the X-Api-Key header.")
    assert _search(a, "bearer token") == [] and _search(a, "header") == ["keys.txt"]
    assert b.delete("/v1/knowledge-bases/docs/documents/keys.txt").status_code == 200
    assert _search(a, "header") == []


def test_concurrent_uploads_through_both_replicas_lose_nothing(
    replicas: tuple[httpx.Client, httpx.Client],
) -> None:
    a, b = replicas
    assert a.post("/v1/knowledge-bases", json={"name": "docs"}).status_code == 201
    errors: list[BaseException] = []

    def upload_many(api: httpx.Client, prefix: str) -> None:
        try:
            for i in range(6):
                _upload(api, f"{prefix}{i}.txt", f"Shared release notes, part {prefix}{i}.")
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=upload_many, args=(api, p)) for api, p in
               ((a, "a"), (b, "b"))]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors
    expected = sorted(f"{p}{i}.txt" for p in "ab" for i in range(6))
    for api in (a, b):
        listed = api.get("/v1/knowledge-bases/docs/documents").json()["data"]
        assert sorted(d["id"] for d in listed) == expected
        assert sorted(_search(api, "shared release notes")) == expected
