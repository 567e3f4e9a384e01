"""One ``/v1/responses`` request resolves its options once, opens the store once and reads
its meta at most once, however many searches the answer makes.

The real server on 127.0.0.1 and the real SQLite store; the counted methods are wrapped to
count and then call through, so the answer is the one the server gives unwatched.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from citewise.config import Settings
from citewise.kb import KnowledgeBase, Library
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.store.sqlite import SQLiteKB, SQLiteStore
from citewise.testing import ScriptedChatModel, script

QUESTION = "When does the API token expire?"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("one-request")
    docs = home / "docs"
    docs.mkdir()
    (docs / "tokens.md").write_text(
        "# Tokens\n\n## Expiry\n\nThe API token expires after a day.\n\n"
        "## Renewal\n\nRenew the API token before it expires.\n"
    )
    Library(Settings(home=home)).get("docs").index_folder(docs)
    return home


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()

    def count(owner: type, name: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)
        def counting(*args: Any, **kwargs: Any) -> Any:
            counts[f"{owner.__name__}.{name}"] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counting)

    count(KnowledgeBase, "resolved")
    count(KnowledgeBase, "resolve")
    count(SQLiteStore, "open")
    count(SQLiteKB, "meta")
    return counts


def two_queries(call: Any) -> dict[str, Any]:
    return {"needs_docs": True, "queries": [call.last, "token renewal"]}


@pytest.fixture(scope="module", params=["extractive", "two planned searches"])
def server(request: pytest.FixtureRequest, home: Path) -> Iterator[tuple[str, int]]:
    """A server's URL and how many searches its answer makes."""
    model = None
    if request.param != "extractive":
        model = ScriptedChatModel(reply=script(plan=two_queries, answer="It expires daily."))
    app = create_app(Settings(home=home), ServerOptions(kb="docs"), model_factory=lambda: model)
    with running(app) as served:
        yield served, 1 if model is None else 2


def test_one_request_resolves_once_opens_the_store_once_and_reads_meta_once(
    server: tuple[str, int], counted: collections.Counter[str]
) -> None:
    url, searches = server
    body = {"model": "citewise-rag", "input": QUESTION, "include": ["file_search_call.results"]}
    httpx.post(f"{url}/v1/responses", json=body, timeout=120)  # warm: models loaded
    counted.clear()
    reply = httpx.post(f"{url}/v1/responses", json=body, timeout=120)
    assert reply.status_code == 200, reply.text
    [search] = [item for item in reply.json()["output"] if item["type"] == "file_search_call"]
    assert search["results"], "the answer must have searched for the counts to mean anything"
    assert len(search["queries"]) == searches
    assert counted["KnowledgeBase.resolved"] == 1
    assert counted["KnowledgeBase.resolve"] == 0
    assert counted["SQLiteStore.open"] == 1
    assert counted["SQLiteKB.meta"] <= 1
