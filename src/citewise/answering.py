"""Answer a conversation from the docs, streaming typed events: statuses, text, the final Answer.

The service layer (``citewise.kb``) drives it for every door; the retriever is a knowledge
base's search under options already resolved from its defaults and the request::

    async for event in astream_answer(messages, retriever, model, options=options):
        match event:
            case Status(text=text): ...     # "Searching the docs: …" (commentary)
            case TextDelta(text=text): ...  # the next piece of the answer
            case Done(answer=answer): ...   # text, url_citation annotations, hits, queries

Cancelling the iteration (a client that disconnects) cancels the run: no model tokens are
requested after it.

Workflows are named parts (:data:`WORKFLOWS`, entry-point group ``citewise.workflows``): a
workflow is an async generator function ``workflow(turns, retriever, model, options)`` that
yields ``Status``/``TextDelta`` events and ends with one ``Done``; ``model`` is None when no
chat model is configured (the built-ins then answer extractively). A registered workflow is
a model of the OpenAI routes and a ``--model`` of ``citewise ask``, by its name.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from citewise.asyncbridge import iterate_in_thread
from citewise.errors import ConfigurationError, ModelError
from citewise.extractive import SMALL_TALK_REPLY, extractive_answer, is_small_talk
from citewise.graph.events import Done, Event, Status, TextDelta
from citewise.models import Answer, Hit, Retriever
from citewise.options import SearchOptions
from citewise.registry import Registry

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AnyMessage, MessageLikeRepresentation

RAG = "citewise-rag"
AGENTIC = "citewise-agentic"
AGENTIC_TOOLS = "citewise-agentic-tools"
DEFAULT_WORKFLOW = RAG

Workflow = Callable[
    ["list[AnyMessage]", Retriever, "BaseChatModel | None", SearchOptions], AsyncIterator[Event]
]
"""What a workflow is registered as (see the module docstring)."""

WORKFLOWS: Registry[Workflow] = Registry(
    "workflow",
    {
        RAG: "citewise.answering:rag_workflow",
        AGENTIC: "citewise.answering:agentic_workflow",
        AGENTIC_TOOLS: "citewise.answering:agentic_tools_workflow",
    },
)
"""The workflows by name; iterating gives ``citewise-rag``, ``citewise-agentic``,
``citewise-agentic-tools``, then the registered ones."""

__all__ = [
    "AGENTIC",
    "AGENTIC_TOOLS",
    "DEFAULT_WORKFLOW",
    "RAG",
    "WORKFLOWS",
    "Done",
    "Workflow",
    "Event",
    "Status",
    "TextDelta",
    "aanswer",
    "afinal_answer",
    "answer",
    "astream_answer",
    "conversation",
    "final_answer",
    "stream_answer",
    "workflow_description",
]

# Errors of the model clients that reach us unwrapped; anything else is a bug, not the model.
_MODEL_CLIENT_MODULES = frozenset({"openai", "httpx", "httpcore", "llama_cpp"})


def conversation(
    messages: str | Sequence[MessageLikeRepresentation],
) -> list[AnyMessage]:
    """LangChain messages from a question, OpenAI-style dicts or messages; the last must be
    the user's."""
    from langchain_core.messages import HumanMessage, convert_to_messages

    converted = [HumanMessage(messages)] if isinstance(messages, str) else []
    if not converted:
        converted = list(convert_to_messages(messages))  # type: ignore[arg-type]
    if not converted or not isinstance(converted[-1], HumanMessage):
        raise ValueError("the conversation must end with a user message")
    return converted  # type: ignore[return-value]


async def astream_answer(
    messages: str | Sequence[MessageLikeRepresentation],
    retriever: Retriever,
    model: BaseChatModel | None,
    *,
    options: SearchOptions | None = None,
    workflow: str = DEFAULT_WORKFLOW,
) -> AsyncIterator[Event]:
    """Answer the conversation's last user message, yielding events as they happen.

    Args:
        messages: the question, or the conversation (OpenAI-style ``{"role", "content"}``
            dicts or LangChain messages) ending with the user's message.
        retriever: what to search: a knowledge base's search (``citewise.kb``).
        model: the chat model; None gives the extractive answer (the passages that best
            match the last message, quoted and cited).
        options: the search options, resolved (each planned query is searched with them).
        workflow: ``citewise-rag`` (plan → retrieve → answer), ``citewise-agentic`` (graded,
            rewritten), ``citewise-agentic-tools`` (the model calls ``search_docs``) or a
            registered workflow's name.

    Yields:
        ``Status`` updates, ``TextDelta`` pieces of the answer, then exactly one ``Done``.

    Raises:
        ConfigurationError: an unknown workflow.
        ModelError: the chat model failed.
    """
    options = options or SearchOptions()
    if workflow not in WORKFLOWS:
        raise ConfigurationError(f"unknown model {workflow!r} (known: {', '.join(WORKFLOWS)})")
    run = WORKFLOWS.get(workflow)
    async for event in run(conversation(messages), retriever, model, options):
        yield event


def graph_workflow(graph: str, description: str) -> Workflow:
    """A workflow that runs a LangGraph graph (``"module:builder"``, imported on first use, so
    naming a workflow loads nothing) with a model, and the extractive answer without one."""
    module, _, builder = graph.partition(":")

    async def run(
        turns: list[AnyMessage],
        retriever: Retriever,
        model: BaseChatModel | None,
        options: SearchOptions,
    ) -> AsyncIterator[Event]:
        build = getattr(importlib.import_module(module), builder)
        async for event in _graph_or_extractive(turns, retriever, model, options, build):
            yield event

    run.__doc__ = description
    return run


rag_workflow = graph_workflow(
    "citewise.graph.rag:rag_graph",
    "Plans up to three search queries, searches the docs once and writes a cited answer.",
)
agentic_workflow = graph_workflow(
    "citewise.graph.agentic:agentic_graph",
    "Searches, grades what it found and rewrites the search when it falls short.",
)
agentic_tools_workflow = graph_workflow(
    "citewise.graph.agentic_tools:agentic_tools_graph",
    "Lets the model call a search tool, grades what it found and rewrites the search\n"
    "when it falls short.",
)


def workflow_description(name: str) -> str:
    """The first paragraph of a workflow's docstring (a registered workflow's model card)."""
    doc = (WORKFLOWS.get(name).__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split()) or f"the {name} workflow"


async def _graph_or_extractive(
    turns: list[AnyMessage],
    retriever: Retriever,
    model: BaseChatModel | None,
    options: SearchOptions,
    graph: Callable[[], Any],
) -> AsyncIterator[Event]:
    if model is None:
        async for event in _extractive(turns, retriever, options):
            yield event
        return
    async for event in _workflow(turns, retriever, model, options, graph()):
        yield event


# With no model to rewrite a follow-up ("And sick leave?"), the earlier user turns give it
# context: searched joined with it, that list is fused with the follow-up's own at a lower
# weight, so the last message still decides the ranking where both lists agree.
_EARLIER_TURNS = 2
_FOLLOW_UP_WEIGHTS = (2.0, 1.0)


async def _extractive(
    turns: list[AnyMessage], retriever: Retriever, options: SearchOptions
) -> AsyncIterator[Event]:
    from langchain_core.messages import HumanMessage

    from citewise.graph.nodes import search_status

    question = str(turns[-1].text)
    if is_small_talk(question):  # a greeting or thanks: nothing to search, no sections to quote
        reply = Answer(text=SMALL_TALK_REPLY, citations=(), hits=(), kind="extractive")
        reply = _grounded(reply, turns, options.verify)
        yield TextDelta(reply.text)
        yield Done(reply)
        return
    earlier = [str(m.text) for m in turns[:-1] if isinstance(m, HumanMessage) and m.text.strip()]
    yield Status(search_status(question, options))
    hits = await retriever.asearch(question, options)
    queries: tuple[str, ...] = (question,)
    if earlier:
        joined = " ".join([*earlier[-_EARLIER_TURNS:], question])
        hits = _fused(hits, await retriever.asearch(joined, options), options.top_k)
        queries = (question, joined)
    result = extractive_answer(" ".join(queries), hits)
    result = replace(result, queries=queries)
    result = _grounded(result, turns, options.verify)
    yield TextDelta(result.text)
    yield Done(result)


def _grounded(result: Answer, turns: list[AnyMessage], mode: str) -> Answer:
    """The extractive answer checked like a written one (``regenerate`` has nothing to
    write again, so it reports)."""
    from citewise.graph.check import conversation_text
    from citewise.grounding import ground, warning

    conversation = conversation_text(turns)
    citations, verification = ground(
        result.text, result.hits, conversation, result.citations, mode=mode
    )
    text = result.text
    if verification is not None and mode == "warn":
        text += warning(verification)
    return replace(result, text=text, citations=citations, verification=verification)


def _fused(last: Sequence[Hit], joined: Sequence[Hit], top_k: int) -> list[Hit]:
    """The follow-up's hits and the joined conversation's, fused by weighted RRF."""
    from citewise.retrieval.fusion import reciprocal_rank_fusion

    by_id = {hit.chunk.chunk_id: hit for hit in [*joined, *last]}  # the follow-up's wins
    rankings = [[hit.chunk.chunk_id for hit in last], [hit.chunk.chunk_id for hit in joined]]
    fused = reciprocal_rank_fusion(rankings, weights=_FOLLOW_UP_WEIGHTS)
    return [replace(by_id[chunk_id], score=score) for chunk_id, score in fused[:top_k]]


async def _workflow(
    turns: list[AnyMessage],
    retriever: Retriever,
    model: BaseChatModel,
    options: SearchOptions,
    graph: Any,
) -> AsyncIterator[Event]:
    from citewise.graph.state import Deps, GraphState
    from citewise.llm import at_temperature_zero

    deps = Deps(model=model, planner=at_temperature_zero(model), retriever=retriever)
    state: GraphState = {"messages": turns, "options": options}
    final: Answer | None = None
    try:
        async for part in graph.astream(
            state, context=deps, stream_mode=["custom", "values"], version="v2"
        ):
            if part["type"] == "custom" and isinstance(part["data"], Status | TextDelta):
                yield part["data"]
            elif part["type"] == "values":
                final = part["data"].get("answer", final)
    except Exception as error:
        if any(c.__module__.split(".")[0] in _MODEL_CLIENT_MODULES for c in type(error).__mro__):
            raise ModelError(f"the chat model failed: {error}") from error
        raise
    if final is None:
        raise ModelError("the workflow ended without an answer")
    yield Done(final)


async def aanswer(
    messages: str | Sequence[MessageLikeRepresentation],
    retriever: Retriever,
    model: BaseChatModel | None,
    *,
    options: SearchOptions | None = None,
    workflow: str = DEFAULT_WORKFLOW,
) -> Answer:
    """The finished answer of :func:`astream_answer`."""
    return await afinal_answer(
        astream_answer(messages, retriever, model, options=options, workflow=workflow)
    )


async def afinal_answer(events: AsyncIterator[Event]) -> Answer:
    """The answer of a stream's ``Done``, the stream read to its end (leaving early would
    close it, and its operation would be recorded as cancelled). ModelError if none."""
    answer: Answer | None = None
    async for event in events:
        if isinstance(event, Done):
            answer = event.answer
    if answer is None:
        raise ModelError("the workflow ended without an answer")
    return answer


def final_answer(events: Iterator[Event]) -> Answer:
    """:func:`afinal_answer` for a synchronous stream."""
    answer: Answer | None = None
    for event in events:
        if isinstance(event, Done):
            answer = event.answer
    if answer is None:
        raise ModelError("the workflow ended without an answer")
    return answer


def stream_answer(
    messages: str | Sequence[MessageLikeRepresentation],
    retriever: Retriever,
    model: BaseChatModel | None,
    *,
    options: SearchOptions | None = None,
    workflow: str = DEFAULT_WORKFLOW,
) -> Iterator[Event]:
    """:func:`astream_answer` for synchronous code (runs it on an event loop in a thread).

    Closing the iterator early cancels the run.
    """
    return iterate_in_thread(
        lambda: astream_answer(messages, retriever, model, options=options, workflow=workflow)
    )


def answer(
    messages: str | Sequence[MessageLikeRepresentation],
    retriever: Retriever,
    model: BaseChatModel | None,
    *,
    options: SearchOptions | None = None,
    workflow: str = DEFAULT_WORKFLOW,
) -> Answer:
    """The finished answer, synchronously (safe to call inside a running event loop too)."""
    return final_answer(
        stream_answer(messages, retriever, model, options=options, workflow=workflow)
    )
