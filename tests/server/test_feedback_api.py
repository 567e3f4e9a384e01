"""Feedback over real HTTP with the official openai client: answers of both APIs (streamed
or not) can be rated by their id; the ratings show in /v1/feedback, the diagnostics snapshot
and export and /metrics, and a restarted server still has them. Also: a Chat Completions
request's top-level ``citewise_settings`` (what Open WebUI can send) chooses the KB."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openai import OpenAI

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script

from .conftest import cite_first, client
from .docs_site import KB, index_docs

QUESTION = "How do I add API keys?"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("feedback-api")
    home = tmp / "home"
    index_docs(home, "https://docs.example/", tmp)
    other = tmp / "other-src"
    other.mkdir()
    (other / "payroll.md").write_text("# Internal\n\n## Payroll\n\nThe payroll runs monthly.\n")
    KnowledgeBase("other", settings=Settings(home=home)).index_folder(other)
    return home


def serve(home: Path) -> Iterator[str]:
    app = create_app(
        Settings(home=home),
        ServerOptions(kb=KB),
        model_factory=lambda: ScriptedChatModel(reply=script(answer=cite_first)),
    )
    with running(app) as url:
        yield url


@pytest.fixture(scope="module")
def url(home: Path) -> Iterator[str]:
    yield from serve(home)


@pytest.fixture(scope="module")
def sdk(url: str) -> Iterator[OpenAI]:
    with client(url) as openai:
        yield openai


def rate(url: str, response_id: str, rating: str, comment: str = "") -> httpx.Response:
    body = {"response_id": response_id, "rating": rating, "comment": comment}
    return httpx.post(f"{url}/v1/feedback", json=body)


def test_answers_of_both_apis_are_rated_and_shown_everywhere(
    url: str, sdk: OpenAI, home: Path
) -> None:
    response = sdk.responses.create(model="citewise-rag", input=QUESTION)
    with sdk.responses.stream(model="citewise-rag", input=QUESTION) as stream:
        streamed = stream.get_final_response()
    chat = sdk.chat.completions.create(
        model="citewise-rag", messages=[{"role": "user", "content": QUESTION}]
    )
    chunks = list(
        sdk.chat.completions.create(
            model="citewise-rag", messages=[{"role": "user", "content": QUESTION}], stream=True
        )
    )
    ids = [response.id, streamed.id, chat.id, chunks[0].id]
    assert len(set(ids)) == 4
    for response_id, rating in zip(ids, ["up", "down", "down", "up"], strict=True):
        rated = rate(url, response_id, rating, "missing the restart" if rating == "down" else "")
        assert rated.status_code == 200, rated.text
        assert rated.json()["kb"] == KB

    listed = httpx.get(f"{url}/v1/feedback").json()
    assert [r["response_id"] for r in listed["data"]] == ids
    assert listed["data"][2]["answer"]["workflow"] == "citewise-rag"
    assert listed["data"][2]["answer"]["sections"][0]["url"].startswith("https://docs.example/")
    assert listed["windows"]["1h"] == {"ratings": 4, "up": 2, "down": 2, "helpful_rate": 0.5}
    [worst] = listed["worst"]  # one question, asked four times
    assert worst["down"] == 2 and worst["comments"] == ["missing the restart"] * 2
    assert QUESTION not in str(listed)  # only its hash, unless the operator enables it

    snapshot = httpx.get(f"{url}/v1/diagnostics").json()
    assert snapshot["feedback"]["windows"]["all"]["helpful_rate"] == 0.5
    export = httpx.get(f"{url}/v1/diagnostics/export").json()
    assert len(export["feedback"]["data"]) == 4
    metrics = httpx.get(f"{url}/metrics").text
    assert f'citewise_feedback_total{{kb="{KB}",rating="down"}} 2.0' in metrics

    for restarted in serve(home):  # a new server on the same home still has them
        again = httpx.get(f"{restarted}/v1/feedback").json()
        assert [r["response_id"] for r in again["data"]] == ids


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        ({"response_id": "resp_nope", "rating": "up"}, 404, "response_id"),
        ({"response_id": "resp_nope", "rating": "sideways"}, 400, "rating"),
        ({"rating": "up"}, 400, None),
    ],
)
def test_bad_feedback_is_refused_naming_the_problem(
    url: str, body: dict[str, str], status: int, param: str | None
) -> None:
    response = httpx.post(f"{url}/v1/feedback", json=body)
    assert response.status_code == status, response.text
    if param is not None:
        assert response.json()["error"]["param"] == param


def test_a_top_level_citewise_settings_chooses_the_knowledge_base(sdk: OpenAI) -> None:
    chat = sdk.chat.completions.create(
        model="citewise-rag",
        messages=[{"role": "user", "content": "When does the payroll run?"}],
        extra_body={"citewise_settings": {"kb": "other"}},
    )
    assert "payroll" in (chat.choices[0].message.content or "").lower()
    both = httpx.post(
        f"{str(sdk.base_url).rstrip('/')}/chat/completions",
        json={
            "model": "citewise-rag",
            "messages": [{"role": "user", "content": "payroll?"}],
            "citewise_settings": '{"kb": "other"}',
            "metadata": {"citewise_settings": '{"kb": "docs"}'},
        },
    )
    assert both.status_code == 400 and "not both" in both.json()["error"]["message"]
