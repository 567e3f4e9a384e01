"""One library for the whole server: the REST API and the OpenAI routes share each open
knowledge base, and a knowledge base's own search defaults apply to its answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from openai import OpenAI

import citewise.kb.library
from citewise.config import Settings
from citewise.kb import KnowledgeBase
from citewise.server import ServerOptions, create_app
from citewise.server.runtime import Runtime
from citewise.server.testing import running

from .conftest import client, settings_metadata

QUESTION = "How do I send the API key?"
HANDBOOK = (
    "# Handbook\n\n"
    "## Keys\n\nSend the API key as a bearer token in the Authorization header.\n\n"
    "## Rotation\n\nRotate the API key every month; the old key works for a day.\n\n"
    "## Scopes\n\nAn API key may be limited to reading; writes then need an admin key.\n"
)


@pytest.fixture
def app(tmp_path: Path) -> FastAPI:
    return create_app(
        Settings(home=tmp_path / "home"), ServerOptions(kb="team"), model_factory=lambda: None
    )


@pytest.fixture
def used(monkeypatch: pytest.MonkeyPatch) -> list[KnowledgeBase]:
    """Each knowledge base object an upload or an answer ran on."""
    seen: list[KnowledgeBase] = []
    add_upload, astream = KnowledgeBase.add_upload, KnowledgeBase.astream

    def spy_add_upload(self: KnowledgeBase, *args: Any, **kwargs: Any) -> Any:
        seen.append(self)
        return add_upload(self, *args, **kwargs)

    def spy_astream(self: KnowledgeBase, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        seen.append(self)
        return astream(self, *args, **kwargs)

    monkeypatch.setattr(KnowledgeBase, "add_upload", spy_add_upload)
    monkeypatch.setattr(KnowledgeBase, "astream", spy_astream)
    return seen


@pytest.fixture
def embedder_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each embedder model loaded."""
    loads: list[str] = []
    get_embedder = citewise.kb.library.get_embedder

    def counting(name: str, **options: Any) -> Any:
        loads.append(name)
        return get_embedder(name, **options)

    monkeypatch.setattr(citewise.kb.library, "get_embedder", counting)
    return loads


@pytest.fixture
def served(app: FastAPI) -> Iterator[tuple[httpx.Client, OpenAI]]:
    with (
        running(app) as url,
        httpx.Client(base_url=url, timeout=60) as rest,
        client(url) as sdk,
    ):
        yield rest, sdk


def cited(sdk: OpenAI, **settings: Any) -> list[str]:
    metadata = settings_metadata(**settings) if settings else None
    response = sdk.responses.create(model="citewise-rag", input=QUESTION, metadata=metadata)
    return [a.url for a in response.output[0].content[0].annotations]  # type: ignore[union-attr]


def test_a_knowledge_bases_defaults_apply_to_its_answers(
    app: FastAPI,
    served: tuple[httpx.Client, OpenAI],
    used: list[KnowledgeBase],
    embedder_loads: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rest, sdk = served
    runtime: Runtime = app.state.runtime
    defaults = {"top_k": 1, "search_type": "full_text"}
    created = rest.post("/v1/knowledge-bases", json={"name": "team", "retrieval": defaults})
    assert created.status_code == 201, created.text
    upload = rest.post(
        "/v1/knowledge-bases/team/documents",
        files=[("files", ("handbook.md", HANDBOOK.encode(), "text/markdown"))],
    )
    assert upload.status_code == 200, upload.text

    # The REST search applies the defaults: one hit, by the keyword ranker.
    found = rest.post("/v1/knowledge-bases/team/search", json={"query": QUESTION}).json()
    [hit] = found["data"]
    assert hit["rankers"] == ["keyword"]
    assert (found["options"]["top_k"], found["options"]["search_type"]) == (1, "full_text")

    # A full-text search never asks the library for an embedder; a hybrid one does.
    embedders: list[str] = []
    embedder = runtime.library.embedder

    def counting_embedder(name: str) -> Any:
        embedders.append(name)
        return embedder(name)

    monkeypatch.setattr(runtime.library, "embedder", counting_embedder)
    # Exactly one hit, the one full text ranks first; an uploaded file's citation links to
    # the document's content route, the section as its fragment.
    [url] = cited(sdk)
    path = f"/v1/knowledge-bases/team/documents/{hit['doc_id']}/content"
    assert url == f"{str(sdk.base_url)[: -len('/v1/')]}{path}#{hit['url'].split('#')[1]}"
    document = rest.get(path)
    assert document.status_code == 200
    assert document.headers["content-type"] == "text/markdown; charset=utf-8"
    assert document.text.startswith("# ") and "## " in document.text
    assert embedders == []
    # The request's settings still override the knowledge base's defaults.
    assert len(cited(sdk, top_k=3, search_type="hybrid")) > 1
    assert embedders

    # The REST API and the OpenAI routes used one open knowledge base, one embedder load.
    team = runtime.library.get("team")
    assert used and all(kb is team for kb in used)
    assert runtime.kb() is team
    assert embedder_loads == ["minilm"]


def test_the_model_cards_show_the_default_knowledge_bases_own_defaults(
    served: tuple[httpx.Client, OpenAI],
) -> None:
    rest, sdk = served
    defaults = {"top_k": 4, "search_type": "vector", "context_window": 1}
    rest.post("/v1/knowledge-bases", json={"name": "team", "retrieval": defaults})
    settings = (sdk.models.retrieve("citewise-rag").model_extra or {})["citewise_settings"]
    assert {name: settings["defaults"][name] for name in defaults} == defaults
    assert settings["defaults"]["kb"] == "team"
    assert settings["schema"]["properties"]["top_k"]["default"] == 4
    listed = rest.get("/v1/knowledge-bases").json()["data"]
    assert [kb["id"] for kb in listed] == ["team"] and listed[0]["retrieval"]["top_k"] == 4
