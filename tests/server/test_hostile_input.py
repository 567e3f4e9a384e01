"""Hostile HTTP input gets a 400 naming the field before any work: strings that are not text
(a lone surrogate escape, a NUL), JSON nested too deeply (the body or the settings inside
``metadata.citewise_settings``); a full disk is a 507 with a message, not a 500."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script
from tests.reliability.conftest import write_tiny_docs

JSON = {"content-type": "application/json"}
RAG = "citewise-rag"


@pytest.fixture(scope="module")
def small_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-input")
    home = root / "home"
    KnowledgeBase("t", settings=Settings(home=home)).index_folder(write_tiny_docs(root))
    return home


@pytest.fixture(scope="module")
def url(small_home: Path) -> Iterator[str]:
    model = ScriptedChatModel(reply=script(answer="Install with pip ([Setup](guide/a/#setup))."))
    app = create_app(Settings(home=small_home), ServerOptions(kb="t"), model_factory=lambda: model)
    with running(app) as base:
        yield base


def post(url: str, path: str, body: bytes) -> httpx.Response:
    return httpx.post(f"{url}{path}", content=body, headers=JSON, timeout=60)


SURROGATE = "\\ud800"
NUL = "\\u0000"


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/responses", f'{{"model":"{RAG}","input":"a {SURROGATE} b"}}', "input"),
        (
            "/v1/responses",
            f'{{"model":"{RAG}","input":[{{"role":"user","content":"x{SURROGATE}"}}]}}',
            "input[0].content",
        ),
        (
            "/v1/chat/completions",
            f'{{"model":"{RAG}","messages":[{{"role":"user","content":"x {SURROGATE}"}}]}}',
            "messages[0].content",
        ),
        (
            "/v1/chat/completions",
            f'{{"model":"{RAG}","stream":true,"messages":[{{"role":"user","content":"{SURROGATE}"}}]}}',
            "messages[0].content",
        ),
        (
            "/v1/responses",
            f'{{"model":"{RAG}","input":"hi","metadata":{{"x":"{SURROGATE}"}}}}',
            "metadata.x",
        ),
        ("/v1/responses", f'{{"model":"{RAG}","input":"a {NUL} b"}}', "input"),
        ("/v1/responses", f'{{"model":"{RAG}","stream":true,"input":"a {NUL} b"}}', "input"),
        (
            "/v1/chat/completions",
            f'{{"model":"{RAG}","messages":[{{"role":"user","content":"a{NUL}"}}]}}',
            "messages[0].content",
        ),
        ("/v1/knowledge-bases/t/search", f'{{"query":"a {NUL} b"}}', "query"),
        ("/v1/knowledge-bases/t/search", f'{{"query":"{SURROGATE}"}}', "query"),
        (
            "/v1/responses",
            json.dumps(
                {
                    "model": RAG,
                    "input": "hi",
                    "metadata": {"citewise_settings": '{"page_prefix": "\\u0000"}'},
                }
            ),  # fmt: skip
            "metadata.citewise_settings.page_prefix",
        ),
    ],
)
def test_a_string_that_is_not_text_is_a_400_naming_the_field(
    url: str, path: str, body: str, param: str
) -> None:
    response = post(url, path, body.encode())
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == param
    assert error["message"].startswith(f"{param}: ")


def test_deeply_nested_settings_are_a_400(url: str) -> None:
    settings = "[" * 5000 + "]" * 5000
    body = {"model": RAG, "input": "hi", "metadata": {"citewise_settings": settings}}
    response = post(url, "/v1/responses", json.dumps(body).encode())
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "metadata.citewise_settings"
    assert "nested more than 32 levels" in error["message"]


def test_a_deeply_nested_body_is_a_400_in_time_proportional_to_the_depth(url: str) -> None:
    body = b'{"model":"' + RAG.encode() + b'","input":"hi","x":' + b"[" * 500_000
    started = time.perf_counter()
    response = post(url, "/v1/responses", body + b"]" * 500_000 + b"}")
    assert response.status_code == 400
    assert "nested more than 32 levels" in response.json()["error"]["message"]
    assert time.perf_counter() - started < 5


def test_real_nesting_and_text_pass(url: str) -> None:
    part = {"type": "input_text", "text": "How to install? 🎉 café"}
    body = {
        "model": RAG,
        "input": [{"role": "user", "content": [part]}],
        "metadata": {"citewise_settings": json.dumps({"top_k": 3, "doc_ids": ["guide/a.md"]})},
    }
    response = post(url, "/v1/responses", json.dumps(body).encode())
    assert response.status_code == 200, response.text


_SERVER = """
import resource, sys
from pathlib import Path
import uvicorn
from citewise.config import Settings
from citewise.server import ServerOptions, create_app
home, port_file = Path(sys.argv[1]), Path(sys.argv[2])
app = create_app(Settings(home=home), ServerOptions(kb="t"), model_factory=lambda: None)
config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
server = uvicorn.Server(config)
import threading
def announce():
    import time
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    port_file.write_text(str(port))
    # From here on no file can grow: every write fails as on a full disk (EFBIG).
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
threading.Thread(target=announce, daemon=True).start()
server.run()
"""


def test_clearing_diagnostics_on_a_full_disk_is_a_507(small_home: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(small_home, home)
    history = home / "diagnostics.json"
    history.write_text('{"events": [{"t": 1.0, "op": "search", "outcome": "ok"}]}')
    port_file = tmp_path / "port"
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(home), str(port_file)],
        env={**os.environ, "CITEWISE_API_KEYS": ""},
    )
    try:
        deadline = time.time() + 60
        while not port_file.exists() or not port_file.read_text():
            assert time.time() < deadline and server.poll() is None
            time.sleep(0.05)
        time.sleep(0.2)  # the limit is set just after the port is written
        base = f"http://127.0.0.1:{port_file.read_text()}"
        response = httpx.post(f"{base}/v1/diagnostics/clear", timeout=30)
        assert response.status_code == 507, response.text
        error = response.json()["error"]
        assert error["code"] == "storage_full" and "could not write" in error["message"]
        assert httpx.get(f"{base}/healthz", timeout=30).status_code == 200
    finally:
        server.kill()
        server.wait()
    # Nothing was cleared and no half-written file is left beside the history.
    assert "search" in history.read_text()
    assert sorted(p.name for p in home.glob(".diagnostics.json.*.tmp")) == []
