"""A PostgreSQL outage under a running ``citewise serve``: while the database is stopped every
route that needs it answers 503 ``store_unavailable`` (with ``Retry-After``) within 5 s,
``/readyz`` says not ready and ``/healthz`` stays live; once it is back, the first request of
each route succeeds (no stale pooled connection, no reconnect back-off). The CLI says it in
one line. A database of our own, since the test stops and restarts it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from citewise.errors import StoreUnavailableError
from citewise.store.postgres import PostgresStore
from tests import pg
from tests.cli.test_serve import free_port
from tests.reliability.conftest import write_tiny_docs

TIMEOUT = 2.0  # CITEWISE_STORE_TIMEOUT of the server under test
ROUTES: dict[str, tuple[str, str, dict[str, object] | None]] = {
    "search": ("POST", "/v1/knowledge-bases/x/search", {"query": "install with pip"}),
    "responses": ("POST", "/v1/responses", {"model": "citewise-rag", "input": "How to install?"}),
    "kb list": ("GET", "/v1/knowledge-bases", None),
    "models": ("GET", "/v1/models", None),
}


@pytest.fixture
def database() -> Iterator[tuple[str, Path]]:
    try:
        url, folder = pg.start()  # its own folder: the test folder is not the server user's
    except pg.Unavailable as exc:
        pytest.skip(f"no PostgreSQL for this test: {exc}")
    try:
        yield url, folder
    finally:
        pg.stop(folder)


def environment(home: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CITEWISE_", "OPENAI_"))}
    return {**env, "CITEWISE_HOME": str(home), "CITEWISE_STORE_URL": url,
            "CITEWISE_STORE_TIMEOUT": str(TIMEOUT)}  # fmt: skip


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.reliability.hashing_cli", *args],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def call(client: httpx.Client, route: str) -> tuple[httpx.Response, float]:
    method, path, body = ROUTES[route]
    started = time.monotonic()
    response = client.request(method, path, json=body)
    return response, time.monotonic() - started


@pytest.mark.slow
def test_a_database_outage_is_503_then_recovers_on_the_first_request(
    tmp_path: Path, database: tuple[str, Path]
) -> None:
    url, folder = database
    env = environment(tmp_path / "home", url)
    indexed = cli(env, "index", str(write_tiny_docs(tmp_path)), "--kb", "x", "-q")
    assert indexed.returncode == 0, indexed.stderr
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.reliability.hashing_cli", "serve", "--port", str(port),
         "--log-level", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    figures: dict[str, list[float]] = {"down": [], "back": []}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            for _ in range(300):
                try:
                    if client.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            assert client.get("/readyz").json() == {"status": "ready"}
            # Several at once, so the pool holds several connections that go stale.
            with ThreadPoolExecutor(8) as pool:
                warm = list(pool.map(lambda r: call(client, r)[0], list(ROUTES) * 3))
            assert [r.status_code for r in warm] == [200] * len(warm), warm[0].text

            store = PostgresStore(url)  # in process: what `citewise index` meets mid-run
            store.names()
            pg.stop(folder, remove=False)
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError, match="PostgreSQL store at 127.0.0.1"):
                store.names()
            with pytest.raises(StoreUnavailableError), store.write_lock("x"):
                pass
            assert time.monotonic() - started < 2 * TIMEOUT + 2
            for route in ROUTES:
                response, took = call(client, route)
                figures["down"].append(took)
                assert response.status_code == 503, (route, response.text)
                assert response.json()["error"]["code"] == "store_unavailable"
                assert "unavailable" in response.json()["error"]["message"]
                assert response.headers["retry-after"].isdigit()
                assert took < 5, (route, took)
            ready = client.get("/readyz")
            assert ready.status_code == 503 and ready.headers["retry-after"]
            assert client.get("/healthz").status_code == 200  # alive: do not restart it
            down = cli(env, "kb", "list")
            assert down.returncode == 1
            (line,) = down.stderr.strip().splitlines()
            assert "PostgreSQL store" in line

            pg.resume(folder)
            for route in ROUTES:
                response, took = call(client, route)
                figures["back"].append(took)
                assert response.status_code == 200, (route, response.text)
            assert client.get("/readyz").status_code == 200
            assert store.names() == ["x"]
            store.close()
    finally:
        server.terminate()
        _, errors = server.communicate(timeout=30)
    print("store outage, seconds per route (search, responses, kb list, models):")
    print("  down:", [round(t, 2) for t in figures["down"]])
    print("  back:", [round(t, 2) for t in figures["back"]])
    assert "Traceback" not in errors, errors[-3000:]
