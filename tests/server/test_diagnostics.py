"""``/v1/diagnostics``: the history of the CLI's and the server's operations in one home, its
windows and alerts, the export, clearing it (admin key) and ``citewise diagnostics``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from citewise.cli import main
from citewise.config import Settings
from citewise.kb.diagnostics import HISTORY_FILE, digest
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script

from .conftest import FAIL, cite_first, cli_indexed_home, client

QUESTION = "How do I rotate the signing key?"
DOCS = {
    "keys.md": "# Signing keys\n\n## Rotation\n\nRotate the signing key with `acme keys rotate`.\n",
    "deploy.md": "# Deploy\n\n## Containers\n\nRun `acme serve` behind a reverse proxy.\n",
}
ADMIN = {"Authorization": "Bearer admin-secret"}
USER = {"Authorization": "Bearer user-key"}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home indexed by ``citewise index`` (recorded in its history), alerting from 2 events."""
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CITEWISE_ALERT_MIN_EVENTS", "2")
    monkeypatch.setenv("CITEWISE_ALERT_ERROR_RATE", "0.3")
    return cli_indexed_home(tmp_path, DOCS)


@pytest.fixture
def url(home: Path) -> Iterator[str]:
    model = ScriptedChatModel(reply=script(answer=cite_first))
    app = create_app(Settings(home=home), ServerOptions(kb="notes"), model_factory=lambda: model)
    app.state.admin_keys = frozenset({"admin-secret"})
    app.state.api_keys = frozenset({"user-key"})
    with running(app) as url:
        yield url


def test_the_snapshot_shows_cli_and_server_operations_and_alerts(url: str, home: Path) -> None:
    with client(url, "user-key") as sdk:
        sdk.responses.create(model="citewise-rag", input=QUESTION)
        failed = list(sdk.responses.create(model="citewise-rag", input=FAIL, stream=True))
        assert failed[-1].type == "response.failed"
        list(sdk.responses.create(model="citewise-rag", input=f"{FAIL} again", stream=True))
    assert httpx.get(f"{url}/v1/diagnostics").status_code == 401
    snapshot = httpx.get(f"{url}/v1/diagnostics", headers=USER).json()

    assert set(snapshot["windows"]) == {"1m", "5m", "1h"}
    minute = snapshot["windows"]["1m"]["operations"]
    assert minute["ingest"]["count"] == 1  # the CLI's, in the same home
    assert {"parse", "chunk", "embed", "store"} <= set(minute["ingest"]["stages"])
    answer = minute["answer"]
    assert (answer["count"], answer["errors"]) == (3, 2)
    assert answer["error_rate"] == pytest.approx(2 / 3, abs=1e-3)
    assert {"plan", "search", "generate"} <= set(answer["stages"])
    assert answer["latency"]["p50"] <= answer["latency"]["p95"] <= answer["latency"]["max"]
    assert minute["search"]["count"] == 3 and minute["search"]["zero_result_rate"] == 0

    (alert,) = snapshot["alerts"]
    assert (alert["alert"], alert["operation"], alert["window"], alert["count"]) == (
        "error_rate", "answer", "5m", 3,
    )  # fmt: skip
    assert "over the last 5m, based on 3 operations" in alert["message"]
    stored = (home / HISTORY_FILE).read_text()
    assert "rotate" not in stored.lower() and FAIL not in stored
    assert digest(QUESTION) in stored


def test_export_downloads_the_events_and_clear_needs_the_admin_key(url: str) -> None:
    with client(url, "user-key") as sdk:
        sdk.responses.create(model="citewise-rag", input=QUESTION)
    export = httpx.get(f"{url}/v1/diagnostics/export", headers=USER)
    assert export.status_code == 200
    assert export.headers["content-disposition"].startswith('attachment; filename="citewise-')
    payload = export.json()
    assert [event["op"] for event in payload["history"]] == ["ingest", "search", "answer"]
    assert "rotate" not in export.text.lower()

    clear = f"{url}/v1/diagnostics/clear"
    assert httpx.post(clear, headers=USER).status_code == 403  # a key, not an admin key
    assert httpx.post(clear, headers=ADMIN).json() == {
        "object": "diagnostics.cleared", "cleared": 3,
    }  # fmt: skip
    after = httpx.get(f"{url}/v1/diagnostics", headers=USER).json()
    assert after["events"] == 0  # the clear request itself runs no operation


def test_the_cli_prints_the_same_history(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    body = {"query": "zzzz", "search_type": "full_text"}
    httpx.post(f"{url}/v1/knowledge-bases/notes/search", json=body, headers=ADMIN)
    capsys.readouterr()
    assert main(["diagnostics"]) == 0
    text = capsys.readouterr().out
    assert "last 1m: 2 operations" in text and "alerts: none" in text
    assert "ingest" in text and "  search" in text and "  keyword" in text
    assert main(["diagnostics", "--json"]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    assert snapshot["windows"]["1m"]["operations"]["search"]["zero_result_rate"] == 1.0
    assert main(["diagnostics", "--clear"]) == 0
    assert "cleared 2 events" in capsys.readouterr().out


def test_the_page_serves_without_a_build_step(url: str) -> None:
    page = httpx.get(f"{url}/diagnostics")
    assert page.status_code == 200 and '<script src="/web/diagnostics.js">' in page.text
    script = httpx.get(f"{url}/web/diagnostics.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert "/v1/diagnostics" in script.text
