"""`citewise serve` as an operator runs it: refusals at start, what it says it serves, the
loopback rule, its log lines, and the pages it serves without a CDN."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citewise.cli import build_parser
from citewise.cli.serve import serving_app
from citewise.config import Settings
from citewise.kb import KnowledgeBase

from .conftest import MODEL_ENV


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_ENV}
    env = {k: v for k, v in env.items() if not k.startswith("CITEWISE_")}
    return {**env, "CITEWISE_HOME": str(home), **extra}


def serve(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``citewise serve ARGS`` expected to refuse: it must exit by itself."""
    return subprocess.run(
        [sys.executable, "-m", "citewise", "serve", *args],
        env=environment(home, **env), capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_an_unknown_kb_is_refused_at_start_in_one_line(tmp_path: Path) -> None:
    done = serve(tmp_path / "home", "--kb", "dcos")
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "unknown knowledge base 'dcos'" in line and "known: none yet" in line


def test_an_open_server_beyond_loopback_is_refused_without_keys(tmp_path: Path) -> None:
    done = serve(tmp_path / "home", "--host", "0.0.0.0", "--port", "1")
    assert done.returncode == 1
    assert "refusing to serve on 0.0.0.0 without API keys" in done.stderr
    assert "--insecure-no-auth" in done.stderr


def tiny_kb(home: Path, name: str, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "guide.md").write_text("# Guide\n\n## Install\n\nRun the installer.\n")
    KnowledgeBase(name, settings=Settings(home=home)).index_folder(folder)


def test_with_no_kb_the_only_one_is_served_and_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    tiny_kb(home, "handbook", tmp_path / "docs")
    args = build_parser().parse_args(["serve"])
    with caplog.at_level(logging.INFO, logger="citewise.serve"):
        app = serving_app(args, Settings(home=home))
    assert app.state.runtime.default == "handbook"
    assert "serving knowledge base 'handbook'" in caplog.text
    # Two, neither of them `docs`: both are served, each question routed; said so.
    tiny_kb(home, "policies", tmp_path / "docs")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="citewise.serve"):
        app = serving_app(args, Settings(home=home))
    assert "serving every knowledge base (handbook, policies)" in caplog.text
    assert app.state.runtime.default_name == "all"
    assert app.state.runtime.answering()[0].name == "all"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def insecure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``citewise serve --host 0.0.0.0 --insecure-no-auth`` on an empty home, its log file."""
    home = tmp_path_factory.mktemp("serve")
    log = home / "server.log"
    port = free_port()
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "citewise", "serve", "--host", "0.0.0.0", "--port",
             str(port), "--insecure-no-auth"],
            env=environment(home / "home"), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, log.read_text()
            time.sleep(0.5)
        yield url, log
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_insecure_no_auth_serves_loudly_with_the_admin_api_closed(
    insecure: tuple[str, Path],
) -> None:
    url, log = insecure
    deleted = httpx.delete(f"{url}/v1/knowledge-bases/docs")
    assert deleted.status_code == 403
    assert "CITEWISE_ADMIN_KEYS" in deleted.json()["error"]["message"]
    models = httpx.get(f"{url}/v1/models")  # the question API is open, as asked
    assert models.status_code == 200
    assert httpx.get(f"{url}/favicon.ico").headers["content-type"] == "image/svg+xml"
    time.sleep(0.5)
    lines = log.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line JSON, uvicorn's included
    messages = [record["message"] for record in records]
    assert any(m.startswith("INSECURE: serving on 0.0.0.0 with no API keys") for m in messages)
    assert any("the admin API stays closed" in m for m in messages)
    assert any(m.startswith("serving no knowledge base: no knowledge base yet") for m in messages)
    assert any("Uvicorn running on" in m for m in messages)
    assert not any("favicon" in m and "404" in m for m in messages)


def test_the_swagger_page_works_offline_and_the_schema_says_how_the_api_answers(
    insecure: tuple[str, Path],
) -> None:
    url, _ = insecure
    page = httpx.get(f"{url}/docs").text
    assert "cdn." not in page and "https://" not in page.replace("https://swagger.io", "")
    assert '"/web/swagger-ui-bundle.js"' in page and '"/web/swagger-ui.css"' in page
    script = httpx.get(f"{url}/web/swagger-ui-bundle.js")
    assert script.status_code == 200 and "SwaggerUIBundle" in script.text
    assert httpx.get(f"{url}/web/swagger-ui.css").status_code == 200
    schema = httpx.get(f"{url}/openapi.json").json()
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert schema["security"] == [{"bearerAuth": []}]
    create = schema["paths"]["/v1/responses"]["post"]["responses"]
    assert "422" not in create and "400" in create
    assert "HTTPValidationError" not in json.dumps(schema)
