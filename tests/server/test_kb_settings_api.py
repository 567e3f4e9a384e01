"""A knowledge base's own settings over HTTP (chunk overlap, chat model, cross-encoder
directory), and what a client may override per request: a real server, a scripted
OpenAI-compatible endpoint as the chat models, the official openai SDK as the client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import OpenAIStub, StubReply

from .conftest import client

ADMIN = {"Authorization": "Bearer admin-secret"}
GUIDE = "# Guide\n\n## Keys\n\nSend the API key as a bearer token.\n"


def variants(body: dict[str, Any]) -> StubReply:
    name = body["tools"][0]["function"]["name"]
    return StubReply(tool_call=(name, {"queries": ["bearer token header"]}))


@pytest.fixture
def endpoint() -> Iterator[OpenAIStub]:
    with OpenAIStub(variants) as stub:
        yield stub


@pytest.fixture
def url(tmp_path: Path, endpoint: OpenAIStub) -> Iterator[str]:
    settings = Settings(home=tmp_path, llm_base_url=endpoint.base_url, llm_model="global-model")
    options = ServerOptions(kb="team", admin_keys=frozenset({"admin-secret"}))
    with running(create_app(settings, options)) as url:
        with httpx.Client(base_url=url, headers=ADMIN, timeout=60) as api:
            created = api.post(
                "/v1/knowledge-bases",
                json={"name": "team", "chat_model": "kb-model", "chunk_overlap": 40,
                      "chunk_overlap_unit": "tokens", "reranker_dir": str(tmp_path / "ce")},
            )  # fmt: skip
            assert created.status_code == 201, created.text
            uploaded = api.post(
                "/v1/knowledge-bases/team/documents", files=[("files", ("guide.md", GUIDE))]
            )
            assert uploaded.status_code == 200, uploaded.text
        yield url


def test_the_settings_are_shown_and_the_search_uses_the_kb_model(
    url: str, endpoint: OpenAIStub, tmp_path: Path
) -> None:
    with httpx.Client(base_url=url, headers=ADMIN, timeout=60) as api:
        shown = api.get("/v1/knowledge-bases/team").json()
        assert (shown["chat_model"], shown["reranker_dir"]) == ("kb-model", str(tmp_path / "ce"))
        assert (shown["chunk_overlap"], shown["chunk_overlap_unit"]) == (40, "tokens")
        search = {"query": "API key", "query_rewrite": "multi_query"}
        assert api.post("/v1/knowledge-bases/team/search", json=search).status_code == 200
        assert (
            api.post(
                "/v1/knowledge-bases/team/search", json={**search, "chat_model": "other-model"}
            ).status_code
            == 200
        )
        refused = api.post(
            "/v1/knowledge-bases/team/search", json={**search, "rerank": "cross_encoder"}
        )
        assert refused.status_code == 400
        assert f"{tmp_path / 'ce'} lacks model.onnx" in refused.json()["error"]["message"]
    assert [body["model"] for body in endpoint.requests] == ["kb-model", "other-model"]


def ask(sdk: OpenAI, **settings: Any) -> None:
    sdk.responses.create(
        model="citewise-rag",
        input="Hello",
        metadata={"citewise_settings": json.dumps(settings)},
    )


def test_a_client_picks_only_among_the_servers_models_and_never_a_directory(url: str) -> None:
    with client(url) as sdk:
        models = sdk.models.list().data
        schema = (models[0].model_extra or {})["citewise_settings"]
        assert "chat_model" in schema["schema"]["properties"]
        assert "reranker_dir" not in schema["schema"]["properties"]
        assert "reranker_dir" not in schema["defaults"]
        with pytest.raises(openai.BadRequestError) as raised:
            ask(sdk, chat_model="someone-elses-model")
        assert raised.value.param == "metadata.citewise_settings.chat_model"
        assert "global-model" in raised.value.message and "kb-model" in raised.value.message
        with pytest.raises(openai.BadRequestError) as raised:
            ask(sdk, reranker_dir="/etc")
        assert raised.value.param == "metadata.citewise_settings.reranker_dir"
