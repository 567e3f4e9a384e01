"""The opt-in agentic workflow (model ``citewise-agentic``): retrieval graded, rewritten once.

decide → retrieve → grade → answer, or rewrite → retrieve → grade → answer. The ``rewrites``
counter in state bounds the loop at the request's ``agent_rewrites`` (default one, never more
than ``MAX_AGENT_REWRITES``); when the last grade still says no, the answer says the
documentation does not cover the question. ``agent_grading=false`` answers from the first
search without grading. Each budget decision is a status the client sees.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from citewise.errors import ModelError
from citewise.graph.check import after_check, check
from citewise.graph.nodes import answer, plan, retrieve
from citewise.graph.prompts import Grade, Rewrite, grade_messages, rewrite_messages
from citewise.graph.state import MAX_REWRITES, Deps, GraphState, Update, emit_status
from citewise.llm import astructured

NAME = "citewise-agentic"
GRADE_TAG = "citewise:grade"
REWRITE_TAG = "citewise:rewrite"
CHECKING = "Checking whether the sections answer the question"
NOT_GRADING = "Answering from the sections found (grading is off for this request)"

log = logging.getLogger(__name__)


def rewriting_status(attempt: int, budget: int = MAX_REWRITES) -> str:
    return f"Nothing relevant found; rewriting the search ({attempt} of {budget})"


def spent_status(budget: int) -> str:
    """The status when the last grade says no and no rewrite is left."""
    if budget == 0:
        return "Nothing relevant found; no rewrites allowed for this request"
    return f"Nothing relevant found after {budget} of {budget} rewrites"


def _budget(state: GraphState) -> int:
    return state["options"].agent_rewrites


async def grade(state: GraphState, runtime: Runtime[Deps]) -> Update:
    """One structured yes/no over the retrieved sections (none retrieved: no)."""
    hits = state.get("hits", [])
    if not state["options"].agent_grading:
        return {"relevant": True, "status": emit_status(NOT_GRADING)}
    if not hits:
        return {"relevant": False, **_spent(state)}
    status = emit_status(CHECKING)
    messages = grade_messages(state["messages"], hits)
    try:
        result = await astructured(runtime.context.planner, Grade, messages, tags=[GRADE_TAG])
    except ModelError as error:
        # An unreadable grade should not discard sections: the answer step still judges them.
        log.warning("grading failed (%s); answering from the sections found", error)
        return {"relevant": True, "status": status}
    if result.relevant == "yes":
        return {"relevant": True, "status": status}
    return {"relevant": False, "status": status + _spent(state).get("status", [])}


def _spent(state: GraphState) -> Update:
    """A status saying the rewrite budget is spent, when it is (else nothing)."""
    budget = _budget(state)
    if state.get("rewrites", 0) < budget:
        return {}
    return {"status": emit_status(spent_status(budget))}


async def rewrite(state: GraphState, runtime: Runtime[Deps]) -> Update:
    """One structured call for a new query; increments the counter that bounds the loop."""
    attempt = state.get("rewrites", 0) + 1
    status = emit_status(rewriting_status(attempt, _budget(state)))
    queries = state.get("queries", [])
    try:
        messages = rewrite_messages(state["messages"], queries)
        result = await astructured(runtime.context.planner, Rewrite, messages, tags=[REWRITE_TAG])
        new_queries = [result.query] if result.query else []
    except ModelError as error:
        log.warning("rewriting failed (%s); not searching again", error)
        new_queries = []
    return {"queries": new_queries, "rewrites": attempt, "status": status}


async def after_decide(state: GraphState) -> Literal["retrieve", "answer"]:
    return "retrieve" if state.get("queries") else "answer"


async def after_grade(state: GraphState) -> Literal["answer", "rewrite"]:
    if state.get("relevant") or state.get("rewrites", 0) >= _budget(state):
        return "answer"
    return "rewrite"


async def after_rewrite(state: GraphState) -> Literal["retrieve", "answer"]:
    return "retrieve" if state.get("queries") else "answer"


@cache
def agentic_graph() -> CompiledStateGraph[GraphState, Deps, GraphState, GraphState]:
    """The compiled agentic workflow (``decide`` is the same planning call as ``plan``)."""
    return graded_graph(NAME, plan, after_rewrite)


def graded_graph(
    name: str, decide: Callable[..., Any], after_rewrite: Callable[..., Any]
) -> CompiledStateGraph[GraphState, Deps, GraphState, GraphState]:
    """decide → retrieve → grade → answer → check, a search graded irrelevant rewritten
    and routed by ``after_rewrite``: the shape both agentic workflows share."""
    graph = StateGraph(GraphState, context_schema=Deps)
    graph.add_node("decide", decide)
    graph.add_node("retrieve", retrieve)
    graph.add_node("grade", grade)
    graph.add_node("rewrite", rewrite)
    graph.add_node("answer", answer)
    graph.add_node("check", check)
    graph.add_edge(START, "decide")
    graph.add_conditional_edges("decide", after_decide)
    graph.add_edge("retrieve", "grade")
    graph.add_conditional_edges("grade", after_grade)
    graph.add_conditional_edges("rewrite", after_rewrite)
    graph.add_edge("answer", "check")
    graph.add_conditional_edges("check", after_check, ["answer", END])
    return graph.compile(name=name)
