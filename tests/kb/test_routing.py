"""Routing without a model: library names in any spelling, common words only as names, else
the nearest library (and a close second)."""

from __future__ import annotations

import pytest

from citewise.kb.catalog import Card
from citewise.kb.routing import SECOND_MARGIN, is_word, named_libraries, route

CARDS = [
    Card("lgos", "langgraph-openai-serve", "0.12.0", aliases=("lgos", "langgraph-openai-serve")),
    Card("requests", "requests", "2.34.2", aliases=("requests",)),
    Card("citewise", "citewise", aliases=("citewise",)),
]


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("How do I add API keys to LGOS?", ["lgos"]),
        ("Does LangGraph_OpenAI_Serve stream?", ["lgos"]),
        ("How does langgraph openai serve register graphs?", ["lgos"]),
        ("How do I upload a file with requests?", ["requests"]),
        ("What does requests.Session.mount do?", ["requests"]),
        ("How do I pass a timeout in Requests when it retries?", ["requests"]),
        ("import requests fails with an SSL error", ["requests"]),
        ("Is the requests library thread-safe?", ["requests"]),
        ("Call an LGOS graph with `requests`", ["lgos", "requests"]),
        ("How many requests per second can the server handle?", []),
        ("Requests time out behind the proxy: why?", []),
        ("How do I retry failed requests to the graph?", []),
        ("Does citewise cache embeddings?", ["citewise"]),
    ],
)
def test_names_route_and_common_words_only_as_names(question: str, named: list[str]) -> None:
    assert named_libraries(question, CARDS) == named


def test_a_common_word_is_a_word_of_the_embedders_vocabulary() -> None:
    assert is_word("requests") and is_word("Click")
    assert not is_word("lgos") and not is_word("citewise")


def scores(values: dict[str, float]):  # type: ignore[no-untyped-def]
    return lambda name, question: values[name]


def test_a_question_naming_none_goes_to_the_nearest_library() -> None:
    chosen = route(
        "How do I retry?", CARDS, scores({"lgos": 0.3, "requests": 0.6, "citewise": 0.2})
    )
    assert (chosen.names, chosen.how) == (("requests",), "nearest")
    assert chosen.scores["lgos"] == 0.3


def test_a_close_second_library_is_searched_too() -> None:
    close = {"lgos": 0.5, "requests": 0.5 - SECOND_MARGIN / 2, "citewise": 0.1}
    assert route("How are streams closed?", CARDS, scores(close)).names == ("lgos", "requests")


def test_a_library_whose_name_is_a_plain_word_is_never_the_second() -> None:
    close = {"lgos": 0.5, "requests": 0.5 - SECOND_MARGIN / 2, "citewise": 0.1}
    question = "How many requests per second are served?"
    assert route(question, CARDS, scores(close)).names == ("lgos",)


def test_named_libraries_skip_the_nearest_search() -> None:
    def refuse(name: str, question: str) -> float:
        raise AssertionError("no search for a question naming its library")

    found = route("What proxies does requests support, and which work with LGOS?", CARDS, refuse)
    assert (found.names, found.how) == (("requests", "lgos"), "named")
    assert route("anything", CARDS[:1], refuse).names == ("lgos",)
