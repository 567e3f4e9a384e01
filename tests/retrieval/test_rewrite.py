"""Query rewrites by a (scripted) chat model: the question first, then its rewrites."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from citewise.errors import ConfigurationError
from citewise.retrieval.rewrite import rewrite_query
from citewise.testing import ScriptedChatModel

REPLIES: dict[str, Any] = {
    "HypotheticalPassage": {"passage": "Set the key in the environment before starting."},
    "QueryVariants": {
        "queries": ["api key setting", "configure auth", "api key setting", "x", "y"]
    },
    "StepBackQuestion": {"question": "How does authentication work?"},
}


def model() -> ScriptedChatModel:
    return ScriptedChatModel(reply=lambda call: REPLIES[call.kind])


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("hyde", ["How do I set the API key?", "Set the key in the environment before starting."]),
        ("multi_query", ["How do I set the API key?", "api key setting", "configure auth", "x"]),
        ("step_back", ["How do I set the API key?", "How does authentication work?"]),
    ],
)
def test_rewrites(how: str, expected: list[str]) -> None:
    scripted = model()
    assert asyncio.run(rewrite_query("How do I set the API key?", how, scripted)) == expected
    [call] = scripted.calls
    assert "How do I set the API key?" in call.last and call.temperature == 0.0


def test_off_needs_no_model() -> None:
    assert asyncio.run(rewrite_query("q", "off", None)) == ["q"]


def test_a_rewrite_without_a_model_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="query_rewrite=hyde needs a chat model"):
        asyncio.run(rewrite_query("q", "hyde", None))


def test_unknown_rewrite() -> None:
    with pytest.raises(
        ConfigurationError,
        match=r"unknown query_rewrite 'fusion' \(known: off, hyde, multi_query, step_back\)",
    ):
        asyncio.run(rewrite_query("q", "fusion", model()))


def test_prompt_asks_for_the_question_language() -> None:
    scripted = model()
    asyncio.run(rewrite_query("向量权重有什么作用？", "step_back", scripted))
    assert "language of the user's question" in scripted.calls[0].system
