"""The workflows' state, the run context that carries the model and retriever, and statuses."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Required, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage
from langgraph.config import get_stream_writer

from citewise.graph.events import Status
from citewise.models import Answer, Hit, Retriever
from citewise.options import SearchOptions

MAX_REWRITES = 1
"""The agentic workflow rewrites its search at most this many times unless a request's
``agent_rewrites`` says otherwise (up to ``citewise.options.MAX_AGENT_REWRITES``)."""


@dataclass(frozen=True)
class Deps:
    """What a run needs besides its state: passed as LangGraph's run context, never stored.

    ``planner`` is the same chat model at temperature 0, for the hidden structured calls.
    """

    model: BaseChatModel
    planner: BaseChatModel
    retriever: Retriever


class Update(TypedDict, total=False):
    """What a node returns: only the keys it changes.

    ``status`` collects every status update in order (also streamed as it happens);
    ``rewrites`` counts the agentic workflow's query rewrites; ``relevant`` is its grade;
    ``retry`` is what ``check`` tells the one regeneration (``verify=regenerate``).
    """

    queries: list[str]
    hits: list[Hit]
    relevant: bool
    rewrites: int
    answer: Answer
    retry: str
    status: Annotated[list[str], operator.add]


class GraphState(Update, total=False):
    """The state of one request: the conversation and its search options, then what nodes
    add."""

    messages: Required[list[AnyMessage]]
    options: Required[SearchOptions]


def emit_status(text: str) -> list[str]:
    """Stream ``text`` as a status update now; return it for the state's ``status`` list."""
    get_stream_writer()(Status(text))
    return [text]
