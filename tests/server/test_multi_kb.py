"""One server, every knowledge base: a request names one, several or none (routed), and
citations and statuses say which library and version each section is from."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from citewise.server import ServerOptions, create_app
from citewise.server.testing import running

from ..kb.libraries import three_libraries
from .conftest import client, settings_metadata

BOTH = "How do I set a timeout in requests, and API key middleware in LGOS?"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    library = three_libraries(tmp_path_factory.mktemp("multi-server"))
    app = create_app(library.settings, ServerOptions(), library=library)
    with running(app) as base:
        yield base


def titles(url: str, question: str, **settings: object) -> list[str]:
    reply = client(url).chat.completions.create(
        model="citewise-rag", messages=[{"role": "user", "content": question}],
        metadata=settings_metadata(**settings) if settings else None,
    )  # fmt: skip
    annotations = reply.choices[0].message.annotations or []
    return [a.url_citation.title for a in annotations]


def test_a_request_naming_none_is_routed_to_the_libraries_it_names(url: str) -> None:
    cited = titles(url, BOTH)
    assert any(t.startswith("requests 2.34.2 › ") for t in cited)
    assert any(t.startswith("langgraph-openai-serve 0.12.0 › ") for t in cited)
    assert all(t.startswith("handbook") for t in titles(url, "How many days of holiday leave?"))


def test_a_request_names_one_a_list_or_all(url: str) -> None:
    # One: answered as before, its own titles.
    assert titles(url, BOTH, kb="requests") and not any(
        t.startswith("requests 2.34.2") for t in titles(url, BOTH, kb="requests")
    )
    listed = titles(url, "How are cookies kept across calls?", kb=["handbook", "requests"])
    assert listed and all(t.startswith(("handbook", "requests 2.34.2")) for t in listed)
    assert any(t.startswith("handbook") for t in titles(url, "holiday leave", kb="all"))


def test_an_unknown_name_in_a_list_is_a_400_naming_the_known_ones(url: str) -> None:
    with pytest.raises(openai.BadRequestError, match=r"unknown knowledge base 'flask'.*lgos"):
        titles(url, BOTH, kb=["requests", "flask"])


def test_the_model_card_offers_all(url: str) -> None:
    card = client(url).models.retrieve("citewise-rag").model_extra or {}
    schema = card["citewise_settings"]
    assert schema["schema"]["properties"]["kb"]["enum"] == ["handbook", "lgos", "requests", "all"]
    assert schema["defaults"]["kb"] == "all"


def test_the_stream_status_names_the_libraries(url: str, tmp_path: Path) -> None:
    stream = client(url).chat.completions.create(
        model="citewise-rag", messages=[{"role": "user", "content": BOTH}], stream=True,
        metadata=settings_metadata(show_status=True),
    )  # fmt: skip
    reasoning = "".join(
        getattr(chunk.choices[0].delta, "reasoning_content", None) or ""
        for chunk in stream
        if chunk.choices
    )
    assert "Searching requests 2.34.2, langgraph-openai-serve 0.12.0" in reasoning


@pytest.mark.browser
def test_the_chat_page_picks_all_or_one_library(url: str) -> None:
    from .test_web import drive

    seen = drive("library", url, "How do I keep cookies across calls?", "requests")
    assert seen["pickerShown"] and seen["chosenAtFirst"] == "all"
    assert seen["choices"] == ["handbook", "lgos", "requests", "all"]
    (sent,) = seen["sent"]
    assert json.loads(sent["citewise_settings"]) == {"kb": "requests"}
    assert seen["answer"]["citations"]


def test_file_search_results_name_library_and_version(url: str) -> None:
    response = client(url).responses.create(
        model="citewise-rag", input=BOTH, include=["file_search_call.results"]
    )
    (call,) = [item for item in response.output if item.type == "file_search_call"]
    libraries = {(r.attributes or {}).get("library") for r in call.results or []}
    assert libraries == {"requests", "lgos"}
    versions = {(r.attributes or {}).get("version") for r in call.results or []}
    assert versions == {"2.34.2", "0.12.0"}
