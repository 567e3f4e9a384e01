"""The tool-calling agentic workflow (model ``citewise-agentic-tools``): the model calls
``search_docs``.

decide → retrieve → grade → answer, or grade → rewrite → decide → … The ``decide`` step is
one call of the chat model with the ``search_docs`` tool bound (``bind_tools``): the model
searches by calling it (up to ``MAX_QUERIES`` calls at once) or answers without a search by
calling none. A search graded irrelevant is rewritten (the ``Rewrite`` call of
``citewise-agentic``) and the model decides again, with the rewrite as a suggestion, so
it may also stop searching; the rewrites are bounded by ``agent_rewrites`` as in the
structured workflow, whose grade, rewrite, answer and check nodes this one shares. A model
that cannot call tools (``bind_tools`` not implemented) decides with the structured
planning call instead.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

from citewise import telemetry
from citewise.graph.agentic import graded_graph
from citewise.graph.nodes import UNDERSTANDING, plan
from citewise.graph.prompts import MAX_QUERIES, MAX_QUERY_CHARS, split_conversation
from citewise.graph.state import Deps, GraphState, Update, emit_status
from citewise.llm import NOSTREAM_TAG, track_model_calls

NAME = "citewise-agentic-tools"
DECIDE_TAG = "citewise:decide"
TOOL_NAME = "search_docs"

log = logging.getLogger(__name__)


class SearchDocs(BaseModel):
    """Search the documentation for the sections that answer one part of the question."""

    model_config = ConfigDict(title=TOOL_NAME)  # the tool's name as the model sees it

    query: str = Field(
        max_length=MAX_QUERY_CHARS,
        description="a short standalone search query: the key terms of one part of the "
        "question, with references to earlier turns resolved",
    )


DECIDE_SYSTEM = f"""\
You are the search step of a documentation assistant. To look something up in the \
documentation, call the {TOOL_NAME} tool, once per distinct part of the user's last message \
(at most {MAX_QUERIES} calls), each with a short standalone query. Do not call it for \
greetings, thanks, small talk, questions about you or the conversation, requests unrelated \
to the documentation, or messages too vague to search: reply without a tool call then."""

DECIDE_AGAIN = """\
The search so far found nothing that answers the user's last message. A rewritten query \
that may work better: {suggestion}
Call {tool} again (with that query or a better one), or reply without a tool call if the \
documentation cannot answer it."""


def decide_messages(
    messages: Sequence[AnyMessage], suggestion: str | None = None
) -> list[BaseMessage]:
    """The decide call's messages: the conversation, and after a rewrite its query."""
    history, last = split_conversation(messages)
    system = DECIDE_SYSTEM
    if suggestion:
        system += "\n\n" + DECIDE_AGAIN.format(suggestion=suggestion, tool=TOOL_NAME)
    return [SystemMessage(system), *history, HumanMessage(last)]


def tool_queries(reply: AIMessage) -> list[str]:
    """The queries of the reply's ``search_docs`` calls (bounded, repeats once)."""
    queries: list[str] = []
    for call in reply.tool_calls:
        args: dict[str, Any] = call.get("args") or {}
        query = args.get("query")
        if call.get("name") == TOOL_NAME and isinstance(query, str) and query.strip():
            queries.append(query.strip()[:MAX_QUERY_CHARS])
    return list(dict.fromkeys(queries))[:MAX_QUERIES]


async def decide(state: GraphState, runtime: Runtime[Deps]) -> Update:
    """One call with ``search_docs`` bound: its tool calls are the searches (none: answer)."""
    rewrites = state.get("rewrites", 0)
    planner = runtime.context.planner
    try:
        bound = planner.bind_tools([SearchDocs])
    except NotImplementedError:
        log.info("the chat model cannot call tools; deciding with the planning call")
        return await plan(state, runtime) if rewrites == 0 else {}
    status = emit_status(UNDERSTANDING) if rewrites == 0 else []
    rewritten = state.get("queries") or []
    suggestion = rewritten[0] if rewrites and rewritten else None
    messages = decide_messages(state["messages"], suggestion)
    track_model_calls()
    try:
        with telemetry.stage("plan"):
            reply = await bound.ainvoke(messages, config={"tags": [DECIDE_TAG, NOSTREAM_TAG]})
    except ValueError as error:  # a reply LangChain could not read as a message
        log.warning("deciding failed (%s); searching the message as written", error)
        reply = AIMessage("", tool_calls=[_as_written(state, suggestion)])
    queries = tool_queries(reply) if isinstance(reply, AIMessage) else []
    update: Update = {"queries": queries, "status": status}
    if rewrites == 0:
        update.update({"hits": [], "rewrites": 0})
    return update


def _as_written(state: GraphState, suggestion: str | None) -> Any:
    question = suggestion or split_conversation(state["messages"])[1].strip()
    return {"name": TOOL_NAME, "args": {"query": question[:MAX_QUERY_CHARS]}, "id": "fallback"}


async def after_decide(state: GraphState) -> Literal["retrieve", "answer"]:
    if state.get("queries"):
        return "retrieve"
    return "answer"


async def after_rewrite(state: GraphState) -> Literal["decide", "answer"]:
    return "decide" if state.get("queries") else "answer"


@cache
def agentic_tools_graph() -> CompiledStateGraph[GraphState, Deps, GraphState, GraphState]:
    """The compiled tool-calling workflow (grade, rewrite, answer and check are
    ``citewise-agentic``'s nodes)."""
    return graded_graph(NAME, decide, after_rewrite)
