"""POST /v1/chat/completions through the official openai SDK, against a real server."""

from __future__ import annotations

import openai
import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from citewise.testing import ScriptedChatModel

from .conftest import FAIL, settings_metadata

QUESTION = "How do I add API key authentication?"


def test_streamed_chunks_carry_text_then_annotations_on_the_final_chunk(
    scripted: OpenAI,
) -> None:
    stream = scripted.chat.completions.create(
        model="citewise-rag", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    chunks = list(stream)
    assert all(isinstance(chunk, ChatCompletionChunk) for chunk in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
    assert text.startswith("Use the middleware described in [")
    # Statuses are not content: clients send content back as history.
    assert "Searching the docs" not in text
    final = chunks[-1].choices[0]
    assert final.finish_reason == "stop"
    assert all(chunk.choices[0].finish_reason is None for chunk in chunks[:-1])
    (annotation,) = final.delta.model_extra["annotations"]  # type: ignore[index]
    assert annotation["type"] == "url_citation"
    span = annotation["url_citation"]
    assert text[span["start_index"] : span["end_index"]] == f"[{span['title']}]({span['url']})"
    assert len({chunk.id for chunk in chunks}) == 1


def test_non_streaming_message_has_annotations(scripted: OpenAI) -> None:
    completion = scripted.chat.completions.create(
        model="citewise-agentic", messages=[{"role": "user", "content": QUESTION}]
    )
    assert isinstance(completion, ChatCompletion)
    message = completion.choices[0].message
    assert message.content is not None and message.annotations
    span = message.annotations[0].url_citation
    assert message.content[span.start_index : span.end_index] == f"[{span.title}]({span.url})"


def test_history_comes_from_messages(scripted: OpenAI, scripted_model: ScriptedChatModel) -> None:
    before = len(scripted_model.calls)
    scripted.chat.completions.create(
        model="citewise-rag",
        messages=[
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "What is LGOS?"},
            {"role": "assistant", "content": "A server for LangGraph graphs."},
            {"role": "user", "content": [{"type": "text", "text": "How do I secure it?"}]},
        ],
    )
    plan = scripted_model.calls[before]
    texts = [m.text for m in plan.messages]
    assert "What is LGOS?" in texts and "A server for LangGraph graphs." in texts
    assert plan.last == "How do I secure it?"


def test_extractive_chat_answer_has_annotations(extractive: OpenAI) -> None:
    completion = extractive.chat.completions.create(
        model="citewise-rag",
        messages=[{"role": "user", "content": QUESTION}],
        metadata=settings_metadata(top_k=3),
    )
    message = completion.choices[0].message
    assert message.content is not None and message.content.startswith("*Extractive answer")
    assert message.annotations and len({a.url_citation.url for a in message.annotations}) <= 3


@pytest.mark.parametrize("greeting", ["hi", "Thanks!"])
def test_extractive_small_talk_quotes_no_docs(extractive: OpenAI, greeting: str) -> None:
    completion = extractive.chat.completions.create(
        model="citewise-rag", messages=[{"role": "user", "content": greeting}]
    )
    message = completion.choices[0].message
    assert message.content and "documentation" in message.content
    assert ">" not in message.content and "http" not in message.content
    assert not message.annotations


def test_a_model_failure_mid_stream_raises_an_api_error(scripted: OpenAI) -> None:
    stream = scripted.chat.completions.create(
        model="citewise-rag", messages=[{"role": "user", "content": f"{FAIL} now"}], stream=True
    )
    with pytest.raises(openai.APIError, match="scripted outage"):
        list(stream)


def test_a_conversation_must_end_with_the_user(scripted: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        scripted.chat.completions.create(
            model="citewise-rag", messages=[{"role": "assistant", "content": "Hello"}]
        )
    assert raised.value.param == "messages"
