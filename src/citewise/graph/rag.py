"""The default workflow (model ``citewise-rag``): plan → retrieve → answer → check, two model
calls (three when ``verify=regenerate`` writes the answer again)."""

from __future__ import annotations

from functools import cache

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from citewise.graph.check import after_check, check
from citewise.graph.nodes import answer, plan, retrieve
from citewise.graph.state import Deps, GraphState

NAME = "citewise-rag"


@cache
def rag_graph() -> CompiledStateGraph[GraphState, Deps, GraphState, GraphState]:
    """The compiled workflow; one instance serves every request (state is per run).

    ``plan`` makes the one hidden structured call, ``retrieve`` is code only (and does
    nothing without queries), ``answer`` makes the one streamed call and ``check`` verifies
    it (once back to ``answer`` under ``verify=regenerate``).
    """
    graph = StateGraph(GraphState, context_schema=Deps)
    graph.add_node("plan", plan)
    graph.add_node("retrieve", retrieve)
    graph.add_node("answer", answer)
    graph.add_node("check", check)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "retrieve")
    graph.add_edge("retrieve", "answer")
    graph.add_edge("answer", "check")
    graph.add_conditional_edges("check", after_check, ["answer", END])
    return graph.compile(name=NAME)
