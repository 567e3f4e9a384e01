"""The API as its schema says: 405s carry ``Allow``; a client without a key gets its 401
before any body is read (a malformed, hostile or oversized body included); ``/openapi.json``
documents the error statuses the server answers (never FastAPI's 422), the knowledge-base
name pattern and the bearer scheme."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from citewise import strategies
from citewise.config import Settings
from citewise.errors import ConfigurationError
from citewise.kb import RERANKERS, STRATEGIES
from citewise.server import ServerOptions, create_app
from citewise.server.apidocs import KB_NAME_PATTERN
from citewise.server.knowledge import MAX_QUESTIONS, MIN_CHILD_CHARS, MIN_PARENT_CHARS
from citewise.server.testing import running
from citewise.store.checks import KB_NAME

KEY = {"Authorization": "Bearer k"}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("contract") / "home"
    options = ServerOptions(api_keys=frozenset({"k"}), admin_keys=frozenset({"k"}))
    app = create_app(Settings(home=home), options, model_factory=lambda: None)
    with running(app) as base:
        yield base


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/v1/knowledge-bases/x", "GET, HEAD, DELETE"),
        ("PATCH", "/v1/knowledge-bases", "GET, HEAD, POST"),
        ("GET", "/v1/responses", "POST"),
        ("DELETE", "/v1/models", "GET, HEAD"),
    ],
)
def test_a_405_says_which_methods_the_path_allows(
    url: str, method: str, path: str, allow: str
) -> None:
    response = httpx.request(method, f"{url}{path}", headers=KEY, timeout=30)
    assert response.status_code == 405
    assert response.headers["allow"] == allow
    assert response.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize(
    "body",
    [b'{"model": "citewise-rag", "input": ', b'{"input": "\\ud800"}', b"[" * 10_000],
    ids=["malformed", "surrogate", "deep"],
)
def test_without_a_key_the_401_comes_before_the_body_is_read(url: str, body: bytes) -> None:
    json = {"content-type": "application/json"}
    response = httpx.post(f"{url}/v1/responses", content=body, headers=json, timeout=30)
    assert response.status_code == 401, response.text  # was a 400 about the body
    assert response.headers["www-authenticate"].startswith("Bearer")
    wrong = httpx.post(
        f"{url}/v1/responses", content=body, headers=json | {"Authorization": "Bearer no"}
    )
    assert wrong.status_code == 401
    # With the key, the body is looked at (and refused).
    keyed = httpx.post(f"{url}/v1/responses", content=body, headers=json | KEY, timeout=30)
    assert keyed.status_code == 400


def test_an_oversized_body_without_a_key_is_a_401_not_read(url: str) -> None:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nContent-Length: 52428800\r\n\r\n{"
        )
        answer = s.recv(4096)
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]  # not a 413 (nor a wait)


def schema(url: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(f"{url}/openapi.json", headers=KEY, timeout=30).json()
    return found


def test_the_schema_documents_the_errors_the_server_answers(url: str) -> None:
    paths = schema(url)["paths"]
    statuses = {
        (method.upper(), path): set(operation["responses"])
        for path, methods in paths.items()
        for method, operation in methods.items()
    }
    for where, documented in statuses.items():
        assert "422" not in documented, where
        assert {"400", "401", "503"} <= documented, where
    assert {"404", "408", "413", "502"} <= statuses[("POST", "/v1/responses")]
    assert {"403", "409", "413", "507"} <= statuses[("POST", "/v1/knowledge-bases")]
    assert {"404", "507"} <= statuses[("DELETE", "/v1/knowledge-bases/{kb}")]


def test_the_schema_gives_the_name_pattern_and_the_bearer_scheme(url: str) -> None:
    assert KB_NAME_PATTERN == f"^{KB_NAME.pattern}$"  # the server's own rule
    found = schema(url)
    name = found["components"]["schemas"]["CreateKnowledgeBase"]["properties"]["name"]
    assert name["pattern"] == KB_NAME_PATTERN and name["minLength"] == 1
    for path, methods in found["paths"].items():
        for operation in methods.values():
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "kb":
                    assert parameter["schema"]["pattern"] == KB_NAME_PATTERN, path
    assert found["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert found["security"] == [{"bearerAuth": []}]
    # What the pattern refuses, the server refuses with a 400.
    refused = httpx.post(f"{url}/v1/knowledge-bases", json={"name": ""}, headers=KEY)
    assert refused.status_code == 400, refused.text
    assert re.fullmatch(KB_NAME_PATTERN, "") is None


def test_the_schema_states_the_values_the_server_takes(url: str) -> None:
    # The index strategy's bounds, copied into the server's layer, stay the strategy's own.
    assert (MIN_PARENT_CHARS, MIN_CHILD_CHARS, MAX_QUESTIONS) == (
        strategies.MIN_PARENT_CHARS,
        50,
        strategies.MAX_QUESTIONS,
    )
    with pytest.raises(ConfigurationError):
        strategies.IndexStrategy("parent_child", child_chars=MIN_CHILD_CHARS - 1)
    strategies.IndexStrategy("parent_child", child_chars=MIN_CHILD_CHARS)
    found = schema(url)["components"]["schemas"]
    create = found["CreateKnowledgeBase"]["properties"]
    assert create["strategy"]["enum"] == list(STRATEGIES)
    assert create["qa_questions"]["maximum"] == MAX_QUESTIONS
    assert found["SearchRequest"]["properties"]["rerank"]["enum"] == list(RERANKERS)
    assert found["FeedbackRequest"]["properties"]["rating"]["enum"] == ["up", "down"]
    assert re.match(found["CrawlRequest"]["properties"]["url"]["pattern"], "https://a.b/c")
    assert not re.match(found["CrawlRequest"]["properties"]["url"]["pattern"], "ftp://a.b/")
    # The document DELETE route also answers the content route's URL: the schema says so.
    content = schema(url)["paths"]["/v1/knowledge-bases/{kb}/documents/{doc_id}/content"]
    assert set(content) == {"get", "delete"}


@pytest.mark.parametrize(
    ("path", "body", "valid"),
    [
        ("/v1/knowledge-bases/t/search", {"query": "q", "collapse_sections": 0}, False),
        ("/v1/knowledge-bases/t/search", {"query": "q", "agent_rewrites": False}, False),
        ("/v1/knowledge-bases/t/search", {"query": "q", "top_k": 2.0}, True),
        ("/v1/knowledge-bases", {"name": "n", "qa_questions": 11}, False),
        ("/v1/knowledge-bases", {"name": "n", "retrieval": {"agent_grading": 1}}, False),
        ("/v1/knowledge-bases/t/crawl", {"url": "0"}, False),
        ("/v1/knowledge-bases/t/crawl", {"url": "http://127.0.0.1:9/", "rebuild": 0}, False),
        ("/v1/responses", {"model": "citewise-rag", "input": "q", "stream": 1}, False),
        ("/v1/feedback", {"response_id": "r", "rating": ""}, False),
    ],
)
def test_json_types_and_bounds_are_the_schemas(
    url: str, path: str, body: dict[str, Any], valid: bool
) -> None:
    # JSON booleans are not numbers (nor numbers booleans); an integral 2.0 is an integer.
    response = httpx.post(f"{url}{path}", json=body, headers=KEY, timeout=30)
    assert (response.status_code != 400) == valid, response.text
