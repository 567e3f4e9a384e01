"""The citewise-agentic workflow: graded retrieval, at most one rewrite, visible in status."""

from __future__ import annotations

import asyncio

from citewise.answering import AGENTIC, Done, Event, Status, stream_answer
from citewise.graph import prompts
from citewise.graph.agentic import (
    CHECKING,
    NOT_GRADING,
    after_grade,
    rewriting_status,
    spent_status,
)
from citewise.graph.state import MAX_REWRITES, GraphState
from citewise.models import Answer
from citewise.options import SearchOptions
from citewise.testing import ScriptedChatModel, script

from ..fakes import INSTALL, FakeRetriever


def run(
    message: str,
    retriever: FakeRetriever,
    model: ScriptedChatModel,
    options: SearchOptions | None = None,
) -> tuple[list[str], Answer]:
    events: list[Event] = list(
        stream_answer(message, retriever, model, options=options, workflow=AGENTIC)
    )
    assert isinstance(events[-1], Done)
    return [e.text for e in events if isinstance(e, Status)], events[-1].answer


def test_relevant_sections_are_answered_without_a_rewrite() -> None:
    model = ScriptedChatModel(reply=script(grade="yes", answer=f"[Install]({INSTALL.url})"))
    retriever = FakeRetriever()
    status, answer = run("How do I install it?", retriever, model)
    assert [call.kind for call in model.calls] == ["Plan", "Grade", "answer"]
    assert status == [
        "Understanding the question",
        "Searching the docs: How do I install it?",
        CHECKING,
        "Writing the answer",
    ]
    assert retriever.queries == ["How do I install it?"]
    assert len(answer.citations) == 1
    assert "<documentation>" in model.calls[-1].last


def test_irrelevant_sections_get_exactly_one_rewrite_then_a_not_covered_answer() -> None:
    model = ScriptedChatModel(
        reply=script(grade="no", rewrite="install example package", answer="Not covered.")
    )
    retriever = FakeRetriever()
    status, answer = run("How do I install it?", retriever, model)

    assert MAX_REWRITES == 1
    assert retriever.queries == ["How do I install it?", "install example package"]
    assert [call.kind for call in model.calls] == ["Plan", "Grade", "Rewrite", "Grade", "answer"]
    assert status == [
        "Understanding the question",
        "Searching the docs: How do I install it?",
        CHECKING,
        rewriting_status(1),
        "Searching the docs: install example package",
        CHECKING,
        spent_status(1),
        "Writing the answer",
    ]
    assert "(1 of 1)" in rewriting_status(1)
    # The graded-out sections are not shown to the answer call, which says it is not covered.
    answer_call = model.calls[-1]
    assert "<documentation>" not in answer_call.last
    assert prompts.SITUATION_NOT_FOUND in answer_call.system
    assert answer.citations == ()
    # Structured calls are hidden from the token stream and made at temperature 0.
    assert all("nostream" in c.tags and c.temperature == 0.0 for c in model.calls[:-1])


def test_the_router_stops_after_the_bound_whatever_the_grade() -> None:
    state: GraphState = {"messages": [], "options": SearchOptions(), "relevant": False}
    assert asyncio.run(after_grade(state | {"rewrites": 0})) == "rewrite"
    assert asyncio.run(after_grade(state | {"rewrites": MAX_REWRITES})) == "answer"
    assert (
        asyncio.run(after_grade(state | {"rewrites": MAX_REWRITES, "relevant": True})) == "answer"
    )


def test_a_rewrite_that_finds_relevant_sections_answers_from_them() -> None:
    grades = iter(["no", "yes"])
    model = ScriptedChatModel(
        reply=script(grade=lambda call: {"relevant": next(grades)}, answer="See the guide.")
    )
    status, _ = run("How do I install it?", FakeRetriever(), model)
    assert status.count(CHECKING) == 2 and status.count(rewriting_status(1)) == 1
    assert "<documentation>" in model.calls[-1].last


def test_nothing_retrieved_skips_the_grade_call() -> None:
    model = ScriptedChatModel(reply=script(rewrite="other words", answer="Not covered."))
    retriever = FakeRetriever(results=lambda q: [])
    status, _ = run("How do I fly?", retriever, model)
    assert [call.kind for call in model.calls] == ["Plan", "Rewrite", "answer"]
    assert CHECKING not in status and retriever.queries == ["How do I fly?", "other words"]


def test_a_greeting_goes_straight_to_the_answer() -> None:
    model = ScriptedChatModel(reply=script(plan={"needs_docs": False}, answer="Hello!"))
    retriever = FakeRetriever()
    status, answer = run("Hello!", retriever, model)
    assert retriever.calls == [] and answer.text == "Hello!"
    assert status == ["Understanding the question", "Writing the answer"]
    assert [call.kind for call in model.calls] == ["Plan", "answer"]


def test_a_request_may_allow_more_rewrites_and_each_shows_the_budget() -> None:
    rewrites = iter(["install package", "pip install package"])
    model = ScriptedChatModel(
        reply=script(grade="no", rewrite=lambda call: {"query": next(rewrites)}, answer="No.")
    )
    retriever = FakeRetriever()
    status, _ = run("How do I install it?", retriever, model, SearchOptions(agent_rewrites=2))
    assert retriever.queries == ["How do I install it?", "install package", "pip install package"]
    assert [call.kind for call in model.calls].count("Grade") == 3
    assert [s for s in status if "rewrit" in s] == [
        rewriting_status(1, 2),
        rewriting_status(2, 2),
        spent_status(2),
    ]
    assert "(2 of 2)" in rewriting_status(2, 2) and "2 of 2 rewrites" in spent_status(2)


def test_no_rewrites_or_no_grading_within_the_request_budget() -> None:
    model = ScriptedChatModel(reply=script(grade="no", rewrite="other", answer="No."))
    retriever = FakeRetriever()
    status, _ = run("How do I install it?", retriever, model, SearchOptions(agent_rewrites=0))
    assert retriever.queries == ["How do I install it?"]
    assert [call.kind for call in model.calls] == ["Plan", "Grade", "answer"]
    assert spent_status(0) in status

    model = ScriptedChatModel(reply=script(grade="no", answer=f"[Install]({INSTALL.url})"))
    status, answer = run(
        "How do I install it?", FakeRetriever(), model, SearchOptions(agent_grading=False)
    )
    assert [call.kind for call in model.calls] == ["Plan", "answer"]
    assert NOT_GRADING in status and CHECKING not in status
    assert len(answer.citations) == 1  # the sections found are answered from, ungraded
