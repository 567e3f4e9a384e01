"""The grounding step after ``answer``: attribute citations, verify, warn or regenerate once.

``check`` runs :func:`citewise.grounding.ground` on the answer under the request's
``verify`` option. ``report`` attaches the verification; ``warn`` also streams a visible
warning after an answer that failed; ``regenerate`` sends the workflow back to ``answer``
once, with the unsupported names in the prompt. Under ``regenerate`` the first answer is
held back (not streamed) until it is checked, so a client never sees text that is then
replaced; the second answer streams as usual.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.config import get_stream_writer

from citewise import telemetry
from citewise.graph.events import TextDelta
from citewise.graph.state import GraphState, Update, emit_status
from citewise.grounding import ground, regenerate_instruction, warning

REGENERATING = "Checking the answer: writing it again without the names the docs do not hold"


def conversation_text(messages: list[AnyMessage]) -> str:
    """The conversation's user and system messages as one text: names they wrote are
    supported. Earlier answers are not: a name invented once must not vouch for itself."""
    return "\n".join(str(m.text) for m in messages if not isinstance(m, AIMessage))


def holds_back(state: GraphState) -> bool:
    """True when ``answer`` must not stream: a first attempt under ``verify=regenerate``."""
    return state["options"].verify == "regenerate" and not state.get("retry")


async def check(state: GraphState) -> Update:
    """Verify the answer; warn, ask for one regeneration, or release a held-back answer."""
    result = state["answer"]
    mode = state["options"].verify
    retried = bool(state.get("retry"))
    with telemetry.stage("verify"):
        citations, verification = ground(
            result.text,
            result.hits,
            conversation_text(state["messages"]),
            result.citations,
            mode=mode,
        )
    if verification is None:
        return {}
    if (
        mode == "regenerate"
        and not retried
        and (verification.unsupported or verification.outside_links or verification.problems)
    ):
        return {"retry": regenerate_instruction(verification), "status": emit_status(REGENERATING)}
    text = result.text
    write = get_stream_writer()
    if holds_back(state):
        write(TextDelta(text))
    if mode == "warn" and (note := warning(verification)):
        write(TextDelta(note))
        text += note
    verification = replace(verification, regenerated=retried)
    return {
        "answer": replace(result, text=text, citations=citations, verification=verification),
        "retry": "",
    }


async def after_check(state: GraphState) -> Literal["answer", "__end__"]:
    """(Async, like every routing function here: LangGraph runs a sync one on a worker
    thread.) Back to ``answer`` once when ``check`` asked for a regeneration."""
    return "answer" if state.get("retry") else "__end__"
