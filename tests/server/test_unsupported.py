"""OpenAI parameters citewise does not implement, through the openai SDK: a 400 naming each,
never a silent answer of another kind; an agent's tool-call turns in history are accepted."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from openai import OpenAI

QUESTION = [{"role": "user", "content": "How do I add API key authentication?"}]


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"n": 2}, "n"),
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}, "tools"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
    ],
)
def test_chat_parameters_citewise_cannot_honour_are_a_400_naming_them(
    extractive: OpenAI, extra: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        extractive.chat.completions.create(model="citewise-rag", messages=QUESTION, **extra)  # type: ignore[call-overload]
    assert refused.value.param == param
    assert param in refused.value.message


def test_parse_with_a_schema_is_refused_by_name(extractive: OpenAI) -> None:
    from pydantic import BaseModel

    class Reply(BaseModel):
        answer: str

    with pytest.raises(openai.BadRequestError) as refused:
        extractive.chat.completions.parse(
            model="citewise-rag",
            messages=QUESTION,
            response_format=Reply,  # type: ignore[arg-type]
        )
    assert refused.value.param == "response_format"


@pytest.mark.parametrize(
    ("extra", "param"),
    [({"store": True}, "store"), ({"tools": [{"type": "web_search"}]}, "tools")],
)
def test_responses_parameters_citewise_cannot_honour_are_a_400_naming_them(
    extractive: OpenAI, extra: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        extractive.responses.create(model="citewise-rag", input="What is LGOS?", **extra)
    assert refused.value.param == param


def test_an_assistant_tool_call_turn_in_history_is_accepted(extractive: OpenAI) -> None:
    history: Any = [
        {"role": "user", "content": "What is LGOS?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "a server"},
        {"role": "user", "content": "How do I add API key authentication?"},
    ]  # fmt: skip
    reply = extractive.chat.completions.create(model="citewise-rag", messages=history)
    assert reply.choices[0].message.content
    assert extractive.chat.completions.create(model="citewise-rag", messages=QUESTION, n=1)
