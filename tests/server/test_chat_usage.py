"""Chat Completions extras through the official openai SDK: ``usage`` (Responses too),
statuses as ``reasoning_content``, and Open WebUI's task prompts answered without a model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from openai import OpenAI

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script

from .conftest import cite_first, client, settings_metadata

QUESTION = "How do I add API key authentication?"
USAGE = {"input_tokens": 120, "output_tokens": 30, "total_tokens": 150}
TITLE_TASK = """### Task:
Generate a concise, 3-5 word title with an emoji summarizing the chat history.
### Output:
JSON format: { "title": "your concise title here" }
### Chat History:
<chat_history>
USER: How do I add API key authentication?
ASSISTANT: Use the middleware.
</chat_history>"""
TAGS_TASK = TITLE_TASK.replace('"title": "your concise title here"', '"tags": ["tag1"]')


class CountingModel(ScriptedChatModel):
    """The scripted model, reporting token usage as a provider does: on the last chunk."""

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
            yield chunk
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=USAGE))


@pytest.fixture(scope="module")
def counting(lgos_home: Path) -> Iterator[OpenAI]:
    model = CountingModel(reply=script(answer=cite_first))
    app = create_app(
        Settings(home=lgos_home), ServerOptions(kb="lgos"), model_factory=lambda: model
    )
    with running(app) as url, client(url) as sdk:
        yield sdk


def ask(sdk: OpenAI, content: str = QUESTION, **extra: Any) -> Any:
    return sdk.chat.completions.create(
        model="citewise-rag", messages=[{"role": "user", "content": content}], **extra
    )


def test_usage_is_the_models_reported_usage(counting: OpenAI) -> None:
    expected = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    completion = ask(counting)
    assert completion.usage is not None
    assert completion.usage.model_dump(include=set(expected)) == expected

    chunks = list(ask(counting, stream=True, stream_options={"include_usage": True}))
    *answer, last = chunks
    assert last.choices == [] and last.usage is not None
    assert last.usage.model_dump(include=set(expected)) == expected
    assert answer[-1].choices[0].finish_reason == "stop"
    # Without include_usage no usage chunk is sent.
    assert all(chunk.choices for chunk in ask(counting, stream=True))


def test_responses_carry_the_usage_too(counting: OpenAI) -> None:
    response = counting.responses.create(model="citewise-rag", input=QUESTION)
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (120, 30)
    with counting.responses.create(model="citewise-rag", input=QUESTION, stream=True) as stream:
        completed = [e for e in stream if e.type == "response.completed"]
    assert completed[0].response.usage is not None
    assert completed[0].response.usage.total_tokens == 150


def test_extractive_usage_is_zero(extractive: OpenAI) -> None:
    completion = ask(extractive)
    assert completion.usage is not None and completion.usage.total_tokens == 0
    *_, last = ask(extractive, stream=True, stream_options={"include_usage": True})
    assert last.usage is not None and last.usage.total_tokens == 0


def test_statuses_stream_as_reasoning_content_when_asked(counting: OpenAI) -> None:
    def reasoning(chunks: list[Any]) -> str:
        return "".join(
            (c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
            for c in chunks
            if c.choices
        )

    shown = list(ask(counting, stream=True, metadata=settings_metadata(show_status=True)))
    assert reasoning(shown).splitlines() == [
        "Understanding the question",
        f"Searching the docs: {QUESTION}",
        "Writing the answer",
    ]
    content = "".join(c.choices[0].delta.content or "" for c in shown if c.choices)
    assert "Searching the docs" not in content and content.startswith("Use the middleware")
    assert reasoning(list(ask(counting, stream=True))) == ""  # off by default


def test_open_webui_tasks_get_a_direct_reply_without_a_model(extractive: OpenAI) -> None:
    title = ask(extractive, TITLE_TASK)
    assert json.loads(title.choices[0].message.content) == {
        "title": "How do I add API key authentication"
    }
    assert title.choices[0].message.annotations == []
    streamed = ask(extractive, TAGS_TASK, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
    assert json.loads(text) == {"tags": ["Documentation"]}


def test_open_webui_tasks_go_to_the_chat_model_when_there_is_one(counting: OpenAI) -> None:
    # A real model writes titles well; citewise only steps in when there is none.
    assert "Use the middleware" in (ask(counting, TITLE_TASK).choices[0].message.content or "")


def test_the_server_can_show_statuses_for_every_request(lgos_home: Path) -> None:
    model = CountingModel(reply=script(answer=cite_first))
    options = ServerOptions.from_env({"CITEWISE_KB": "lgos", "CITEWISE_SHOW_STATUS": "true"})
    app = create_app(Settings(home=lgos_home), options, model_factory=lambda: model)
    with running(app) as url, client(url) as sdk:
        chunks = list(ask(sdk, stream=True))
    shown = "".join(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
        for c in chunks
        if c.choices
    )
    assert shown.splitlines()[0] == "Understanding the question"
