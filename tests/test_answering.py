"""The public answer API: async and sync streams, cancellation, errors and workflow names."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from citewise.answering import (
    Done,
    Status,
    aanswer,
    answer,
    astream_answer,
    conversation,
    stream_answer,
)
from citewise.errors import ConfigurationError, KnowledgeBaseError
from citewise.testing import ScriptedCall, ScriptedChatModel, script

from .fakes import CONFIGURE, INSTALL, FakeRetriever


def test_the_async_stream_ends_with_one_done() -> None:
    async def collect() -> list[Any]:
        model = ScriptedChatModel(reply=script(answer=f"[Install]({INSTALL.url})"))
        return [event async for event in astream_answer("How?", FakeRetriever(), model)]

    events = asyncio.run(collect())
    assert isinstance(events[0], Status) and isinstance(events[-1], Done)
    assert [type(e) for e in events].count(Done) == 1
    assert events[-1].answer.citations[0].url == INSTALL.url


def test_closing_the_stream_cancels_the_run_before_the_answer_call() -> None:
    release, planned = threading.Event(), threading.Event()

    def slow_plan(call: ScriptedCall) -> dict[str, Any]:
        release.wait()
        planned.set()
        return {"needs_docs": True, "queries": ["install"]}

    model = ScriptedChatModel(reply=script(plan=slow_plan))
    retriever = FakeRetriever()

    async def disconnect_early() -> None:
        events = astream_answer("How do I install it?", retriever, model)
        assert await anext(events) == Status("Understanding the question")
        await events.aclose()  # a client that goes away
        release.set()
        await asyncio.to_thread(planned.wait)
        # Give a run that survived the close every chance to go on to the search.
        for _ in range(20):
            await asyncio.sleep(0.01)

    asyncio.run(disconnect_early())
    assert [call.kind for call in model.calls] == ["Plan"]
    assert retriever.calls == []


def test_the_sync_stream_can_stop_early_and_leaves_no_thread() -> None:
    model = ScriptedChatModel(reply=script())
    events = stream_answer("How?", FakeRetriever(), model)
    assert next(events) == Status("Understanding the question")
    events.close()
    assert not [t for t in threading.enumerate() if t.name == "citewise-answer"]


def test_errors_inside_the_run_reach_the_caller_unchanged() -> None:
    def missing(query: str) -> list[Any]:
        raise KnowledgeBaseError("unknown knowledge base 'x'")

    model = ScriptedChatModel(reply=script())
    with pytest.raises(KnowledgeBaseError, match="unknown knowledge base"):
        answer("How?", FakeRetriever(results=missing), model)


def test_the_sync_answer_works_inside_a_running_event_loop() -> None:
    async def caller() -> str:
        model = ScriptedChatModel(reply=script(answer="Done."))
        return answer("How?", FakeRetriever(), model).text

    assert asyncio.run(caller()) == "Done."


def test_aanswer_returns_the_final_answer() -> None:
    model = ScriptedChatModel(reply=script(answer="Yes."))
    result = asyncio.run(aanswer("How?", FakeRetriever(), model, workflow="citewise-agentic"))
    assert result.text == "Yes." and result.kind == "generated"


def test_unknown_workflows_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="citewise-rag, citewise-agentic"):
        answer("How?", FakeRetriever(), ScriptedChatModel(reply=script()), workflow="gpt-4")


def test_conversations_accept_openai_dicts_and_strings() -> None:
    turns = conversation([{"role": "system", "content": "s"}, {"role": "user", "content": "q"}])
    assert [m.type for m in turns] == ["system", "human"]
    assert conversation("q")[0].text == "q"
    with pytest.raises(ValueError):
        conversation([])


def test_without_a_model_a_conversation_gets_the_extractive_answer(lgos_kb: Any) -> None:
    turns = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "How do I add API key authentication?"},
    ]
    result = lgos_kb.ask(turns)
    question = turns[-1]["content"]
    assert result.kind == "extractive" and result.queries == (question, f"Hi {question}")
    assert any("authentication" in c.url for c in result.citations)


def test_without_a_model_a_follow_up_is_searched_with_the_earlier_questions() -> None:
    from .fakes import LOGGING

    def results(query: str) -> list[Any]:
        # The follow-up alone finds logging; with the earlier question, configuration.
        return [LOGGING, INSTALL] if query == "And the logs?" else [CONFIGURE, LOGGING]

    retriever = FakeRetriever(results=results)
    turns = [
        {"role": "user", "content": "How do I configure it?"},
        {"role": "assistant", "content": "Set EXAMPLE_KEY."},
        {"role": "user", "content": "And the logs?"},
    ]
    result = answer(turns, retriever, None)
    joined = "How do I configure it? And the logs?"
    assert retriever.queries == ["And the logs?", joined]
    assert result.queries == ("And the logs?", joined)
    # Found by both it leads; the follow-up's own list outweighs the joined one's.
    assert [hit.url for hit in result.hits] == [LOGGING.url, INSTALL.url, CONFIGURE.url]


def test_without_a_model_a_single_question_is_searched_once() -> None:
    retriever = FakeRetriever()
    result = answer("How do I install it?", retriever, None)
    assert retriever.queries == ["How do I install it?"]
    assert [hit.url for hit in result.hits] == [INSTALL.url, CONFIGURE.url]
