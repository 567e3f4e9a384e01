"""The server with its chat model behind a real OpenAI-compatible HTTP endpoint."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai import OpenAI
from openai.types.responses import ResponseCompletedEvent, ResponseOutputMessage

from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import OpenAIStub, StubReply

from .conftest import SECTION, client

QUESTION = "How do I add API key authentication?"


def endpoint(body: dict[str, Any]) -> StubReply:
    """Plans by tool call; answers citing the first section of the prompt; fails on FAIL."""
    if body.get("tools"):
        return StubReply(tool_call=("Plan", {"needs_docs": True, "queries": ["API key auth"]}))
    prompt = body["messages"][-1]["content"]
    if "FAIL" in prompt:
        return StubReply(status=400, content="the model refused")
    found = SECTION.search(prompt)
    assert found is not None
    url, title = found.groups()
    return StubReply(content=f"Add the middleware from [{title}]({url}) and restart.")


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(endpoint) as running_stub:
        yield running_stub


@pytest.fixture(scope="module")
def sdk(lgos_home: Path, stub: OpenAIStub) -> Iterator[OpenAI]:
    # The model comes from the settings, as `citewise serve` configures it.
    settings = Settings(home=lgos_home, llm_base_url=stub.base_url, llm_model="stub-model")
    with running(create_app(settings, ServerOptions(kb="lgos"))) as url, client(url) as sdk:
        yield sdk


def test_a_streamed_answer_through_the_http_model(sdk: OpenAI, stub: OpenAIStub) -> None:
    with sdk.responses.create(model="citewise-rag", input=QUESTION, stream=True) as stream:
        events = list(stream)
    completed = events[-1]
    assert isinstance(completed, ResponseCompletedEvent)
    messages = [m for m in completed.response.output if isinstance(m, ResponseOutputMessage)]
    assert [m.phase for m in messages] == ["final_answer"]
    (reasoning,) = [m for m in completed.response.output if m.type == "reasoning"]
    assert reasoning.summary[1].text == "Searching the docs: API key auth"  # type: ignore[union-attr]
    final = messages[-1].content[0]
    assert re.fullmatch(r"Add the middleware from \[.+\]\(https://\S+\) and restart\.", final.text)  # type: ignore[union-attr]
    (annotation,) = final.annotations  # type: ignore[union-attr]
    assert final.text[annotation.start_index : annotation.end_index].endswith(f"({annotation.url})")  # type: ignore[union-attr]
    plan, answer = stub.requests[-2:]
    assert plan["tools"] and not plan.get("stream")
    assert answer["stream"] is True and answer["model"] == "stub-model"


def test_an_endpoint_error_is_response_failed(sdk: OpenAI) -> None:
    with sdk.responses.create(model="citewise-rag", input=f"FAIL {QUESTION}", stream=True) as s:
        events = list(s)
    assert events[-1].type == "response.failed"
    assert "the model refused" in events[-1].response.error.message  # type: ignore[union-attr]
    with pytest.raises(openai.APIStatusError) as raised:
        sdk.chat.completions.create(
            model="citewise-rag", messages=[{"role": "user", "content": f"FAIL {QUESTION}"}]
        )
    assert raised.value.status_code == 502
