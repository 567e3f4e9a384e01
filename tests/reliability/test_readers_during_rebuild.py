"""Searches through a running server while another process rebuilds the knowledge base:
every read answers (no 404/400 "unknown knowledge base") and none comes back empty, on
SQLite and on PostgreSQL (where a server can be started)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from citewise.config import Settings
from citewise.embedding.base import register_embedder
from citewise.server.errors import install_error_handlers
from citewise.server.knowledge import router
from citewise.server.runtime import Runtime, ServerOptions
from citewise.server.testing import running
from tests import pg
from tests.reliability.hashing_cli import HashingEmbedder
from tests.reliability.store_runs import Zygote, write_version

ADMIN = {"Authorization": "Bearer admin"}
REBUILDS = 3


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    if request.param == "sqlite":
        yield None
        return
    url = pg.fresh_url()
    yield url
    pg.drop_schema(url)


def serve(home: Path, store_url: str | None) -> FastAPI:
    register_embedder("hashing", HashingEmbedder)  # what the rebuilding process embeds with
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(router)
    app.state.admin_keys = frozenset({"admin"})
    app.state.api_keys = frozenset()
    settings = Settings(home=home, embedder="hashing", store_url=store_url)
    app.state.runtime = Runtime(settings, ServerOptions(), model_factory=lambda: None)
    return app


@pytest.mark.slow
def test_searches_during_another_process_rebuild_always_answer(
    tmp_path: Path, store_url: str | None
) -> None:
    home = tmp_path / "home"
    env = {"CITEWISE_HOME": str(home), **({"CITEWISE_STORE_URL": store_url} if store_url else {})}
    docs = {v: write_version(tmp_path / f"v{v}", v) for v in (1, 2)}
    zygote = Zygote(tmp_path / "zygote.log")
    try:
        zygote.run(env, "index", str(docs[1]), "--kb", "x", "-q")
        outcomes: Counter[str] = Counter()
        failures: list[str] = []
        done = threading.Event()
        with running(serve(home, store_url)) as url:

            def read() -> None:
                with httpx.Client(base_url=url, headers=ADMIN, timeout=60) as client:
                    while not done.is_set():
                        response = client.post(
                            "/v1/knowledge-bases/x/search",
                            json={"query": "install the package widget", "top_k": 5},
                        )
                        if response.status_code != 200:
                            outcomes[str(response.status_code)] += 1
                            failures.append(response.text[:200])
                        elif not response.json()["data"]:
                            outcomes["empty"] += 1
                        else:
                            outcomes["ok"] += 1

            reader = threading.Thread(target=read)
            reader.start()
            try:
                time.sleep(0.5)
                for n in range(REBUILDS):
                    version = 2 if n % 2 == 0 else 1
                    zygote.run(env, "index", str(docs[version]), "--kb", "x", "--rebuild", "-q")
                time.sleep(0.5)
            finally:
                done.set()
                reader.join(timeout=120)
    finally:
        zygote.close()
    print(f"reads during {REBUILDS} rebuilds by another process:", dict(outcomes))
    assert outcomes["ok"] >= 20, outcomes
    assert set(outcomes) == {"ok"}, (outcomes, failures[:3])
