"""The whole workflow through the real langchain-openai client against a local HTTP endpoint."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from citewise.answering import Done, Status, TextDelta, stream_answer
from citewise.errors import ModelError
from citewise.graph.rag import rag_graph
from citewise.graph.state import Deps, GraphState
from citewise.llm import at_temperature_zero, openai_chat_model
from citewise.options import SearchOptions
from citewise.testing import OpenAIStub, StubReply, pieces

from ..fakes import INSTALL, FakeRetriever

ANSWER = f"Install it with pip ([Install]({INSTALL.url})). Then import it."


def endpoint(body: dict[str, Any]) -> StubReply:
    if body.get("tools"):
        return StubReply(tool_call=("Plan", {"needs_docs": True, "queries": ["install"]}))
    return StubReply(content=ANSWER)


def test_plan_and_streamed_answer_over_real_http_and_sse() -> None:
    retriever = FakeRetriever()
    with OpenAIStub(endpoint) as stub:
        model = openai_chat_model("stub-model", base_url=stub.base_url)
        events = list(stream_answer("How do I install it?", retriever, model))

    plan_request, answer_request = stub.requests
    assert plan_request["temperature"] == 0.0 and not plan_request.get("stream")
    assert plan_request["tools"][0]["function"]["name"] == "Plan"
    assert answer_request["stream"] is True and "tools" not in answer_request
    assert answer_request["temperature"] == 0.0  # the default: reproducible answers
    assert retriever.queries == ["install"]
    assert "<documentation>" in answer_request["messages"][-1]["content"]

    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == pieces(ANSWER)  # one delta per SSE chunk, in order
    assert [e.text for e in events if isinstance(e, Status)] == [
        "Understanding the question",
        "Searching the docs: install",
        "Writing the answer",
    ]
    done = events[-1]
    assert isinstance(done, Done) and done.answer.text == ANSWER
    (citation,) = done.answer.citations
    assert ANSWER[citation.start_index : citation.end_index] == f"[Install]({INSTALL.url})"


def test_no_plan_token_reaches_langgraphs_message_stream() -> None:
    """In ``messages`` mode LangGraph makes every model call stream; the plan's tool-call
    tokens must still stay out (it is tagged ``nostream``)."""

    async def nodes_that_streamed(base_url: str) -> list[str]:
        model = openai_chat_model("stub-model", base_url=base_url)
        deps = Deps(model=model, planner=at_temperature_zero(model), retriever=FakeRetriever())
        question = HumanMessage("How do I install it?")
        state: GraphState = {"messages": [question], "options": SearchOptions()}
        seen = []
        async for _, metadata in rag_graph().astream(state, context=deps, stream_mode="messages"):
            seen.append(metadata["langgraph_node"])
        return seen

    with OpenAIStub(endpoint) as stub:
        seen = asyncio.run(nodes_that_streamed(stub.base_url))
    assert seen and set(seen) == {"answer"}
    assert stub.requests[0].get("stream") is True  # the plan call did stream, unseen


def test_an_endpoint_error_is_a_model_error() -> None:
    def broken(body: dict[str, Any]) -> StubReply:
        return StubReply(status=401, content="invalid api key")

    with OpenAIStub(broken) as stub:
        model = openai_chat_model("stub-model", base_url=stub.base_url)
        with pytest.raises(ModelError, match="invalid api key"):
            list(stream_answer("How do I install it?", FakeRetriever(), model))
