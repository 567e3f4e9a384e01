"""The nodes both workflows share: plan (structured, hidden), retrieve (code only) and answer."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import cast

from langchain_core.messages import AIMessage, BaseMessageChunk, HumanMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from citewise import telemetry
from citewise.asyncbridge import raise_if_cancelled
from citewise.errors import ModelError
from citewise.graph.check import holds_back
from citewise.graph.citations import find_citations
from citewise.graph.events import TextDelta
from citewise.graph.prompts import (
    Plan,
    answer_messages,
    library_plan,
    message_as_query,
    plan_messages,
    section_title,
)
from citewise.graph.state import Deps, GraphState, Update, emit_status
from citewise.llm import astructured, track_model_calls
from citewise.models import Answer, Hit
from citewise.options import SearchOptions
from citewise.retrieval.hybrid import fuse_queries

PLAN_TAG = "citewise:plan"
ANSWER_TAG = "citewise:answer"
UNDERSTANDING = "Understanding the question"
WRITING = "Writing the answer"

log = logging.getLogger(__name__)


def search_status(query: str, options: SearchOptions) -> str:
    """``Searching the docs: …``, or ``Searching the <scope> docs: …`` under a scope."""
    where = f"the {options.scope} docs" if options.restricted else "the docs"
    return f"Searching {where}: {query}"


def merge_hits(rankings: Sequence[Sequence[Hit]]) -> list[Hit]:
    """One list from the planner queries' ranked lists (each one's best first), repeated
    chunks once: fused by relative-score RRF (``fuse_queries``), as the design merges
    multi-query results by score. Each list's best hit scores 1 relative to its own list,
    so every part of a multi-part question stays near the top. Measured against the rank
    interleaving it replaced: ``benchmarks/retrieval-parity.md``.
    """
    return fuse_queries(rankings)


async def plan(state: GraphState, runtime: Runtime[Deps]) -> Update:
    """One structured call at temperature 0: 0–3 standalone queries (none for small talk)."""
    status = emit_status(UNDERSTANDING)
    # Several libraries (citewise.kb.multi): the plan may name those the question is about.
    retriever = runtime.context.retriever
    catalog: str = getattr(retriever, "catalog", "")
    messages = plan_messages(state["messages"], catalog)
    schema = library_plan() if catalog else Plan
    try:
        with telemetry.stage("plan"):
            result = await astructured(runtime.context.planner, schema, messages, tags=[PLAN_TAG])
        queries = result.search_queries()
        named = getattr(result, "libraries", None)
        if named:
            retriever.choose(named)  # type: ignore[attr-defined]
    except ModelError as error:
        # Searching the message as written beats failing the request or answering blind.
        log.warning("planning failed (%s); searching the message as written", error)
        queries = message_as_query(state["messages"])
    return {"queries": queries, "hits": [], "rewrites": 0, "status": status}


async def retrieve(state: GraphState, runtime: Runtime[Deps]) -> Update:
    """Search every query in parallel (one status each) and merge the top ``k`` of each.

    With no queries it does nothing, so a greeting never touches (or loads) the index.
    """
    queries = state.get("queries", [])
    if not queries:
        return {}
    options = state["options"]
    status = [emit_status(search_status(query, options))[0] for query in queries]
    retriever = runtime.context.retriever
    rankings = await asyncio.gather(*(retriever.asearch(query, options) for query in queries))
    return {"hits": merge_hits(rankings), "status": status}


def _discard(_: object) -> None:
    pass


async def answer(state: GraphState, runtime: Runtime[Deps]) -> Update:
    """The only streamed call: the answer from the hits (if any), cited from its final text."""
    status = emit_status(WRITING)
    hits = state.get("hits", [])
    usable = hits if state.get("relevant", True) else []
    searched = bool(state.get("queries")) or state.get("rewrites", 0) > 0
    messages, _ = answer_messages(state["messages"], usable, state["options"], searched=searched)
    if retry := state.get("retry"):
        # The one regeneration sees its first answer and what the check found in it.
        messages += [AIMessage(state["answer"].text), HumanMessage(retry)]
    # Held back under verify=regenerate until checked: ``check`` streams it (or replaces it).
    write = get_stream_writer() if not holds_back(state) else _discard
    pieces: list[str] = []
    track_model_calls()
    stream = cast(
        AsyncGenerator[BaseMessageChunk, None],
        runtime.context.model.astream(messages, config={"tags": [ANSWER_TAG]}),
    )
    # Closed here, at once, however the loop ends (a cancel included): the model's HTTP
    # stream is released now, not when the garbage collector finds the generator.
    with telemetry.stage("generate"):
        async with aclosing(stream):
            async for chunk in stream:
                if piece := str(chunk.text):
                    write(TextDelta(piece))
                    pieces.append(piece)
                raise_if_cancelled()  # a client gone: stop the model (see the function)
    text = "".join(pieces)
    # Spans are computed here from the final text: indices a model writes are never used.
    titles = {hit.url: section_title(hit) for hit in hits}
    result = Answer(
        text=text,
        citations=tuple(find_citations(text, titles)),
        hits=tuple(hits),
        kind="generated",
        queries=tuple(state.get("queries", [])),
    )
    return {"answer": result, "status": status}
