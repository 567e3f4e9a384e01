"""Widget keys over real HTTP: they answer, search and rate their one knowledge base from an
allowed origin, and get a 403 everywhere else (uploads, deletes, admin, another knowledge
base, another origin); their rate limit; the settings that refuse ``*``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from limits import parse

from citewise.config import Settings
from citewise.errors import ConfigurationError
from citewise.kb import KnowledgeBase
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.server.widget import WidgetKeys
from citewise.testing import ScriptedChatModel, script

from .conftest import cite_first
from .docs_site import KB, index_docs

ORIGIN = "http://docs.example"
WIDGET = "pub-widget-key"
API = "secret-api-key"
ADMIN = "secret-admin-key"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("widget-keys")
    home = tmp / "home"
    index_docs(home, "https://docs.example/", tmp)
    other = tmp / "other-src"
    other.mkdir()
    (other / "secret.md").write_text("# Internal\n\n## Payroll\n\nThe payroll runs monthly.\n")
    KnowledgeBase("other", settings=Settings(home=home)).index_folder(other)
    return home


def serve(home: Path, rate: str = "50/minute") -> Iterator[str]:
    app = create_app(
        Settings(home=home),
        ServerOptions(kb=KB, api_keys=frozenset({API}), admin_keys=frozenset({ADMIN})),
        model_factory=lambda: ScriptedChatModel(reply=script(answer=cite_first)),
        widget_keys=WidgetKeys({WIDGET: KB}, frozenset({ORIGIN}), parse(rate)),
    )
    with running(app) as url:
        yield url


@pytest.fixture(scope="module")
def url(home: Path) -> Iterator[str]:
    yield from serve(home)


def widget(origin: str | None = ORIGIN) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {WIDGET}"}
    if origin is not None:
        headers["Origin"] = origin
    return headers


def ask(
    url: str, headers: dict[str, str], settings: dict[str, str] | None = None
) -> httpx.Response:
    metadata = {"citewise_settings": json.dumps(settings)} if settings else {}
    body = {"model": "citewise-rag", "input": "How do I add API keys?", "metadata": metadata}
    return httpx.post(f"{url}/v1/responses", json=body, headers=headers, timeout=60)


def test_a_widget_key_answers_its_knowledge_base_and_rates_the_answer(url: str) -> None:
    answer = ask(url, widget())
    assert answer.status_code == 200, answer.text
    assert answer.headers["access-control-allow-origin"] == ORIGIN  # CORS for its origin
    assert "docs.example/guide/#add-api-keys" in answer.text
    response_id = answer.json()["id"]
    chat = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "citewise-rag", "messages": [{"role": "user", "content": "API keys?"}]},
        headers=widget(),
        timeout=60,
    )
    assert chat.status_code == 200
    rated = httpx.post(
        f"{url}/v1/feedback",
        json={"response_id": response_id, "rating": "up"},
        headers=widget(),
    )
    assert rated.status_code == 200 and rated.json()["kb"] == KB
    found = httpx.post(
        f"{url}/v1/knowledge-bases/{KB}/search", json={"query": "API keys"}, headers=widget()
    )
    assert found.status_code == 200 and found.json()["data"]


def test_the_preflight_of_its_origin_is_answered(url: str) -> None:
    preflight = httpx.options(
        f"{url}/v1/responses",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == ORIGIN


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", f"/v1/knowledge-bases/{KB}/documents"),  # upload
        ("DELETE", f"/v1/knowledge-bases/{KB}/documents/guide.md"),  # delete a document
        ("DELETE", f"/v1/knowledge-bases/{KB}"),  # delete the knowledge base
        ("POST", "/v1/knowledge-bases"),  # create one
        ("POST", f"/v1/knowledge-bases/{KB}/crawl"),
        ("GET", f"/v1/knowledge-bases/{KB}/documents"),
        ("GET", "/v1/knowledge-bases"),
        ("POST", "/v1/diagnostics/clear"),  # admin
        ("GET", "/v1/diagnostics"),
        ("GET", "/v1/feedback"),  # other readers' comments
        ("GET", "/v1/models"),
        ("GET", "/metrics"),
        ("POST", "/v1/knowledge-bases/other/search"),  # another knowledge base
    ],
)
def test_a_widget_key_is_refused_beyond_answering(url: str, method: str, path: str) -> None:
    response = httpx.request(method, f"{url}{path}", headers=widget(), json={"query": "x"})
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "widget_key_forbidden"
    assert "use an API key" in error["message"] or "'docs' only" in error["message"]


def test_nothing_was_changed_by_the_refused_requests(url: str) -> None:
    admin = {"Authorization": f"Bearer {ADMIN}"}
    listed = httpx.get(f"{url}/v1/knowledge-bases", headers=admin).json()["data"]
    assert sorted(kb["id"] for kb in listed) == ["docs", "other"]
    documents = httpx.get(f"{url}/v1/knowledge-bases/{KB}/documents", headers=admin).json()
    assert len(documents["data"]) == 2


def test_a_widget_key_cannot_answer_from_another_knowledge_base(url: str) -> None:
    response = ask(url, widget(), {"kb": "other"})
    assert response.status_code == 403
    assert "'docs' only" in response.json()["error"]["message"]
    assert "payroll" not in response.text.lower()


@pytest.mark.parametrize("origin", ["http://evil.example", "http://docs.example:8080", None])
def test_a_widget_key_is_refused_from_an_origin_not_configured(
    url: str, origin: str | None
) -> None:
    response = ask(url, widget(origin))
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "origin_not_allowed"
    assert "access-control-allow-origin" not in response.headers


def test_an_unknown_key_is_still_a_401_and_the_api_key_still_works(url: str) -> None:
    wrong = ask(url, {"Authorization": "Bearer nope", "Origin": ORIGIN})
    assert wrong.status_code == 401
    assert ask(url, {"Authorization": f"Bearer {API}"}).status_code == 200


def test_a_widget_key_has_its_own_rate_limit(home: Path) -> None:
    for url in serve(home, rate="2/minute"):
        assert [ask(url, widget()).status_code for _ in range(3)] == [200, 200, 429]
        limited = ask(url, widget())
        assert limited.headers["retry-after"]
        assert "per widget key" in limited.json()["error"]["message"]
        assert ask(url, {"Authorization": f"Bearer {API}"}).status_code == 200


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CITEWISE_WIDGET_KEYS": "docs:k", "CITEWISE_WIDGET_ORIGINS": "*"}, "may not be '*'"),
        ({"CITEWISE_WIDGET_KEYS": "docs:k"}, "CITEWISE_WIDGET_ORIGINS is not"),
        ({"CITEWISE_WIDGET_KEYS": "nokb", "CITEWISE_WIDGET_ORIGINS": ORIGIN}, "KB:KEY"),
        (
            {
                "CITEWISE_WIDGET_KEYS": "docs:k",
                "CITEWISE_WIDGET_ORIGINS": ORIGIN,
                "CITEWISE_WIDGET_RATE_LIMIT": "lots",
            },
            "20/minute",
        ),
    ],  # fmt: skip
)
def test_bad_widget_settings_are_refused_naming_the_problem(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        WidgetKeys.from_env(env)


def test_widget_settings_from_the_environment() -> None:
    keys = WidgetKeys.from_env({
        "CITEWISE_WIDGET_KEYS": "docs:k1, lgos:k2",
        "CITEWISE_WIDGET_ORIGINS": "https://a.example/, https://b.example",
    })  # fmt: skip
    assert dict(keys.keys) == {"k1": "docs", "k2": "lgos"}
    assert keys.origins == {"https://a.example", "https://b.example"}
    assert str(keys.rate) == str(parse("20/minute"))
