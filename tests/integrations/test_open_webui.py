"""Open WebUI for real: the ``open-webui`` package (in a virtualenv of its own, named by
``CITEWISE_OPEN_WEBUI_VENV``; 7.4 GB, so not in CI) started against citewise as an OpenAI
connection and driven in headless Chromium. The answer streams into its chat, its citations
are links that resolve to their sections, and the knowledge base chosen by an Open WebUI
*Custom Parameter* (``citewise_settings``, sent top-level: Open WebUI forwards no
``metadata``) is the one citewise answered from. The recipe is in docs/integrations.md."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urldefrag

import httpx
import pytest

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from citewise.kb.feedback import FeedbackStore
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script
from tests.server.conftest import cite_first
from tests.server.docs_site import KB, index_docs, serving, write_pages
from tests.server.test_web import CHROMIUM, WEB_TESTS, browser_or_skip

VENV_ENV = "CITEWISE_OPEN_WEBUI_VENV"
QUESTION = "How do I add API keys?"
MODEL = "citewise-docs"  # an Open WebUI model over citewise-rag, with the Custom Parameter
START_SECONDS = 600

pytestmark = pytest.mark.skipif(
    not os.environ.get(VENV_ENV),
    reason=f"{VENV_ENV} names no Open WebUI virtualenv (pip install open-webui: 7.4 GB)",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_open_webui(venv: Path, citewise: str, data: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Open WebUI on a free port with citewise as its one OpenAI connection, no login."""
    port = free_port()
    env = {
        **os.environ,
        "DATA_DIR": str(data), "WEBUI_AUTH": "False", "WEBUI_SECRET_KEY": "citewise-test",
        "ENABLE_OLLAMA_API": "False", "ENABLE_OPENAI_API": "True",
        "OPENAI_API_BASE_URL": f"{citewise}/v1", "OPENAI_API_KEY": "unused",
        # No network here: nothing fetched at start (models, pip requirements, telemetry).
        "OFFLINE_MODE": "True", "HF_HUB_OFFLINE": "1", "RAG_EMBEDDING_MODEL_AUTO_UPDATE": "False",
        "ANONYMIZED_TELEMETRY": "False", "DO_NOT_TRACK": "True", "SCARF_NO_ANALYTICS": "True",
    }  # fmt: skip
    log = data / "open-webui.log"
    with log.open("wb") as output:  # the child keeps its own copy of the handle
        process = subprocess.Popen(
            [str(venv / "bin" / "open-webui"), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env, stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"Open WebUI exited {process.returncode}: see {log}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        time.sleep(1)
    process.terminate()
    raise AssertionError(f"Open WebUI not up after {START_SECONDS}s: see {log}")


def add_model(url: str) -> str:
    """Sign in (no login: the admin's token) and add the model that chooses ``docs``."""
    token = str(httpx.post(f"{url}/api/v1/auths/signin", json={"email": "", "password": ""},
                           timeout=30).json()["token"])  # fmt: skip
    model = {
        "id": MODEL, "base_model_id": "citewise-rag", "name": "citewise docs",
        # Builtin Tools off: citewise calls no client tools and refuses a request with them.
        "meta": {"description": "citewise over docs", "capabilities": {"builtin_tools": False}},
        "params": {"custom_params": {"citewise_settings": json.dumps({"kb": KB})}},
        "access_control": None, "is_active": True,
    }  # fmt: skip
    created = httpx.post(f"{url}/api/v1/models/create", json=model, timeout=30,
                         headers={"Authorization": f"Bearer {token}"})  # fmt: skip
    assert created.status_code == 200, created.text
    return token


@pytest.mark.browser
def test_open_webui_streams_a_cited_answer_from_the_kb_its_setting_chose(tmp_path: Path) -> None:
    node = browser_or_skip()
    venv = Path(os.environ[VENV_ENV])
    shots = Path(os.environ.get("CITEWISE_ARTIFACTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    site = tmp_path / "site"
    site.mkdir()
    with serving(site) as docs:
        write_pages(site, "")
        home = tmp_path / "home"
        index_docs(home, f"{docs}/", tmp_path)
        other = tmp_path / "other-src"
        other.mkdir()
        (other / "payroll.md").write_text("# Internal\n\n## Payroll\n\nThe payroll runs monthly.\n")
        KnowledgeBase("other", settings=Settings(home=home)).index_folder(other)
        # The server's default is ``other``: only the Custom Parameter leads to ``docs``.
        app = create_app(
            Settings(home=home),
            ServerOptions(kb="other"),
            model_factory=lambda: ScriptedChatModel(reply=script(answer=cite_first)),
        )
        with running(app) as citewise:
            data = tmp_path / "open-webui"
            data.mkdir()
            started = time.monotonic()
            process, url = start_open_webui(venv, citewise, data)
            print(f"Open WebUI up in {time.monotonic() - started:.0f}s")
            try:
                token = add_model(url)
                run = subprocess.run(
                    [node, "open_webui.mjs", url, token, MODEL, QUESTION, str(shots)],
                    cwd=WEB_TESTS, capture_output=True, text=True, timeout=400,
                    env={**os.environ, "CHROMIUM": CHROMIUM},
                )  # fmt: skip
            finally:
                process.terminate()
                process.wait(timeout=60)
            assert run.returncode == 0, run.stderr
            seen = json.loads(run.stdout.strip().splitlines()[-1])
            pages = {link["href"]: httpx.get(link["href"]) for link in seen["links"]}

    assert seen["pageErrors"] == []
    assert "Then restart the server." in seen["answer"]
    assert seen["snapshots"] and seen["snapshots"][0] < seen["snapshots"][-1]  # it grew
    assert seen["links"], "the answer shows no citation links"
    for href, page in pages.items():  # every citation resolves, to its section's anchor
        assert href.startswith(f"{docs}/"), href
        assert page.status_code == 200, href
        fragment = urldefrag(href).fragment
        assert not fragment or f'id="{fragment}"' in page.text, href
    assert any(href.endswith("/guide/#add-api-keys") for href in pages)
    # What reached citewise: every answer Open WebUI asked for came from ``docs``.
    answers = FeedbackStore(home / "feedback.json").export()["data"]
    remembered = json.loads((home / "feedback.json").read_text())["answers"]
    assert answers == [] and remembered
    assert {answer["kb"] for answer in remembered} == {KB}
