"""Models, auth, errors, health and metrics of the server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
from openai import OpenAI
from openai.types.responses import ResponseFailedEvent

from citewise.config import Settings
from citewise.kb import SearchOptions
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running

from .conftest import FAIL, client

QUESTION = "How do I add API key authentication?"


def test_models_list_the_workflows_with_their_settings(
    extractive: OpenAI, lgos_scopes: tuple[str, ...]
) -> None:
    models = {model.id: model for model in extractive.models.list()}
    assert set(models) == {"citewise-rag", "citewise-agentic", "citewise-agentic-tools"}
    for model in models.values():
        extra = model.model_extra or {}
        assert extra["description"]
        settings = extra["citewise_settings"]
        # The search options, with the default knowledge base's own defaults.
        # Less the server-only reranker_dir (a path on the server, never a client's choice).
        defaults = SearchOptions().as_dict(json_types=True)
        del defaults["reranker_dir"]
        assert settings["defaults"] == {
            **defaults,
            "scope": "all",
            "kb": "lgos",
            "show_status": False,
        }
        properties = settings["schema"]["properties"]
        assert set(properties) == {*defaults, "kb", "show_status"}
        assert properties["scope"]["enum"] == list(lgos_scopes)
        assert properties["kb"]["enum"] == ["lgos"]
        assert properties["top_k"]["maximum"] == 100 and properties["top_k"]["default"] == 10
        assert properties["search_type"]["enum"] == ["hybrid", "vector", "full_text"]
        assert properties["rerank"]["enum"] == ["off", "cross_encoder", "llm"]
        assert properties["query_rewrite"]["enum"] == ["off", "hyde", "multi_query", "step_back"]
        assert all(p["description"] for p in properties.values())
    assert extractive.models.retrieve("citewise-agentic").id == "citewise-agentic"


def test_unknown_model_is_404_in_the_openai_envelope(extractive: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        extractive.models.retrieve("gpt-4o")
    assert raised.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError) as raised:
        extractive.responses.create(model="gpt-4o", input=QUESTION)
    assert raised.value.param == "model"


def test_validation_errors_are_400_not_422(extractive_url: str) -> None:
    response = httpx.post(f"{extractive_url}/v1/responses", json={"model": "citewise-rag"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["param"] == "input" and error["type"] == "invalid_request_error"
    bad_json = httpx.post(
        f"{extractive_url}/v1/chat/completions",
        content=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert bad_json.status_code == 400 and "error" in bad_json.json()


def test_unknown_route_is_404_in_the_envelope(extractive_url: str) -> None:
    response = httpx.get(f"{extractive_url}/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_model_failure_is_response_failed_mid_stream_and_502_otherwise(scripted: OpenAI) -> None:
    with scripted.responses.create(
        model="citewise-rag", input=f"{FAIL}: {QUESTION}", stream=True
    ) as stream:
        events = list(stream)
    failed = events[-1]
    assert isinstance(failed, ResponseFailedEvent)
    assert failed.response.status == "failed"
    assert failed.response.error is not None
    assert "scripted outage" in failed.response.error.message
    with pytest.raises(openai.APIStatusError) as raised:
        scripted.responses.create(model="citewise-rag", input=f"{FAIL}: {QUESTION}")
    assert raised.value.status_code == 502 and raised.value.code == "model_error"


@pytest.fixture(scope="module")
def guarded_url(lgos_home: Path) -> Iterator[str]:
    options = ServerOptions(
        kb="lgos", api_keys=frozenset({"key-1", "key-2"}), admin_keys=frozenset({"admin"})
    )
    app = create_app(Settings(home=lgos_home), options, model_factory=lambda: None)
    with running(app) as url:
        yield url


@pytest.mark.parametrize("key", ["wrong", ""])
def test_api_keys_guard_every_route_but_health(guarded_url: str, key: str) -> None:
    with client(guarded_url, key=key or "x") as sdk:
        with pytest.raises(openai.AuthenticationError) as raised:
            sdk.models.list()
    assert raised.value.status_code == 401 and raised.value.code == "invalid_api_key"
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    for path in ("/metrics", "/v1/models"):
        response = httpx.get(f"{guarded_url}{path}", headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["type"] == "authentication_error"
    posted = httpx.post(f"{guarded_url}/v1/responses", json={}, headers=headers)
    assert posted.status_code == 401  # auth comes before validation
    assert httpx.get(f"{guarded_url}/healthz").json() == {"status": "ok"}


def test_a_valid_api_key_or_admin_key_is_accepted(guarded_url: str) -> None:
    for key in ("key-2", "admin"):
        with client(guarded_url, key=key) as sdk:
            assert len(sdk.models.list().data) == 3
            answer = sdk.responses.create(model="citewise-rag", input=QUESTION)
        assert answer.output_text.startswith("*Extractive answer")


def test_metrics_count_requests_errors_and_searches(lgos_home: Path) -> None:
    app = create_app(Settings(home=lgos_home), ServerOptions(kb="lgos"), model_factory=lambda: None)
    with running(app) as url, client(url) as sdk:
        sdk.responses.create(model="citewise-rag", input=QUESTION)
        with pytest.raises(openai.NotFoundError):
            sdk.models.retrieve("nope")
        text = httpx.get(f"{url}/metrics").text
    requests = 'citewise_requests_total{method="POST",model="citewise-rag",route="/v1/responses"'
    assert f'{requests},status="200"}} 1.0' in text
    assert 'citewise_searches_total{kb="lgos"} 1.0' in text
    assert 'citewise_errors_total{route="/v1/models/{model_id}",type="404"} 1.0' in text
    assert 'citewise_request_duration_seconds_count{route="/v1/responses"} 1.0' in text
