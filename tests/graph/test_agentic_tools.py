"""The citewise-agentic-tools workflow: the model searches by calling ``search_docs``
(``bind_tools``), its rewrites are bounded, and it decides again after each rewrite."""

from __future__ import annotations

from citewise.answering import AGENTIC_TOOLS, Done, Event, Status, stream_answer
from citewise.graph import prompts
from citewise.graph.agentic import CHECKING, rewriting_status, spent_status
from citewise.graph.agentic_tools import DECIDE_SYSTEM, TOOL_NAME
from citewise.models import Answer
from citewise.options import SearchOptions
from citewise.testing import ScriptedCall, ScriptedChatModel, script

from ..fakes import INSTALL, FakeRetriever


def run(
    message: str,
    retriever: FakeRetriever,
    model: ScriptedChatModel,
    options: SearchOptions | None = None,
) -> tuple[list[str], Answer]:
    events: list[Event] = list(
        stream_answer(message, retriever, model, options=options, workflow=AGENTIC_TOOLS)
    )
    assert isinstance(events[-1], Done)
    return [e.text for e in events if isinstance(e, Status)], events[-1].answer


def test_the_model_s_tool_calls_are_the_searches() -> None:
    def calls(call: ScriptedCall) -> list[tuple[str, dict[str, str]]]:
        return [(TOOL_NAME, {"query": "install"}), (TOOL_NAME, {"query": "configure"})]

    model = ScriptedChatModel(reply=script(tools=calls, answer=f"[Install]({INSTALL.url})"))
    retriever = FakeRetriever()
    status, answer = run("How do I install and configure it?", retriever, model)
    assert [call.kind for call in model.calls] == ["tools", "Grade", "answer"]
    assert model.calls[0].tools == (TOOL_NAME,)
    assert model.calls[0].system == DECIDE_SYSTEM
    assert sorted(retriever.queries) == ["configure", "install"]
    assert status[0] == "Understanding the question" and CHECKING in status
    assert answer.queries == ("install", "configure") and len(answer.citations) == 1
    # The decide call is hidden from the token stream and made at temperature 0.
    assert "nostream" in model.calls[0].tags and model.calls[0].temperature == 0.0


def test_no_tool_call_answers_without_searching() -> None:
    model = ScriptedChatModel(reply=script(tools=lambda call: "", answer="Hello!"))
    retriever = FakeRetriever()
    status, answer = run("Hi there", retriever, model)
    assert [call.kind for call in model.calls] == ["tools", "answer"]
    assert retriever.queries == [] and answer.text == "Hello!"
    assert prompts.SITUATION_NO_SEARCH in model.calls[-1].system


def test_after_a_rewrite_the_model_decides_again_with_the_rewrite_as_suggestion() -> None:
    grades = iter(["no", "yes"])
    model = ScriptedChatModel(
        reply=script(
            grade=lambda call: {"relevant": next(grades)},
            rewrite="install example package",
            tools=lambda call: [
                (TOOL_NAME, {"query": "pip install" if "rewritten" in call.system else call.last})
            ],
            answer="Use pip.",
        )
    )
    retriever = FakeRetriever()
    status, _ = run("How do I install it?", retriever, model)
    kinds = [call.kind for call in model.calls]
    assert kinds == ["tools", "Grade", "Rewrite", "tools", "Grade", "answer"]
    again = model.calls[3]
    assert "install example package" in again.system
    # The model chose its own query over the suggestion: the decide step is the model's.
    assert retriever.queries == ["How do I install it?", "pip install"]
    assert rewriting_status(1) in status and status.count("Understanding the question") == 1


def test_rewrites_stay_bounded_and_the_model_may_stop_searching() -> None:
    model = ScriptedChatModel(reply=script(grade="no", rewrite="other words", answer="No."))
    retriever = FakeRetriever()
    status, answer = run("How?", retriever, model, SearchOptions(agent_rewrites=2))
    assert retriever.queries == ["How?", "How?", "How?"]
    assert [c.kind for c in model.calls].count("Rewrite") == 2
    assert spent_status(2) in status and answer.citations == ()
    # Deciding again with no tool call ends the search: the answer says it is not covered.
    stops = ScriptedChatModel(
        reply=script(
            grade="no",
            tools=lambda call: "" if "rewritten" in call.system else [(TOOL_NAME, {"query": "x"})],
        )
    )
    retriever = FakeRetriever()
    run("How?", retriever, stops)
    assert retriever.queries == ["x"]
    assert [c.kind for c in stops.calls] == ["tools", "Grade", "Rewrite", "tools", "answer"]
    assert prompts.SITUATION_NOT_FOUND in stops.calls[-1].system
