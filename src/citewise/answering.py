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
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING

from citewise.asyncbridge import iterate_in_thread
from citewise.errors import ConfigurationError, ModelError
from citewise.extractive import extractive_answer
from citewise.graph.events import Done, Event, Status, TextDelta
from citewise.models import Answer, Retriever
from citewise.options import SearchOptions

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AnyMessage, MessageLikeRepresentation

RAG = "citewise-rag"
AGENTIC = "citewise-agentic"
WORKFLOWS = (RAG, AGENTIC)
DEFAULT_WORKFLOW = RAG

__all__ = [
    "AGENTIC",
    "DEFAULT_WORKFLOW",
    "RAG",
    "WORKFLOWS",
    "Done",
    "Event",
    "Status",
    "TextDelta",
    "aanswer",
    "answer",
    "astream_answer",
    "conversation",
    "stream_answer",
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
        workflow: ``citewise-rag`` (plan → retrieve → answer) or ``citewise-agentic``.

    Yields:
        ``Status`` updates, ``TextDelta`` pieces of the answer, then exactly one ``Done``.

    Raises:
        ConfigurationError: an unknown workflow.
        ModelError: the chat model failed.
    """
    options = options or SearchOptions()
    if workflow not in WORKFLOWS:
        raise ConfigurationError(f"unknown model {workflow!r} (known: {', '.join(WORKFLOWS)})")
    turns = conversation(messages)
    if model is None:
        async for event in _extractive(turns[-1].text, retriever, options):
            yield event
        return
    async for event in _workflow(turns, retriever, model, options, workflow):
        yield event


async def _extractive(
    question: str, retriever: Retriever, options: SearchOptions
) -> AsyncIterator[Event]:
    from citewise.graph.nodes import search_status

    yield Status(search_status(question, options))
    hits = await retriever.asearch(question, options)
    result = extractive_answer(question, hits)
    yield TextDelta(result.text)
    yield Done(result)


async def _workflow(
    turns: list[AnyMessage],
    retriever: Retriever,
    model: BaseChatModel,
    options: SearchOptions,
    workflow: str,
) -> AsyncIterator[Event]:
    from citewise.graph.agentic import agentic_graph
    from citewise.graph.rag import rag_graph
    from citewise.graph.state import Deps, GraphState
    from citewise.llm import at_temperature_zero

    graph = agentic_graph() if workflow == AGENTIC else rag_graph()
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
    async for event in astream_answer(
        messages, retriever, model, options=options, workflow=workflow
    ):
        if isinstance(event, Done):
            return event.answer
    raise ModelError("the workflow ended without an answer")  # pragma: no cover


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
    for event in stream_answer(messages, retriever, model, options=options, workflow=workflow):
        if isinstance(event, Done):
            return event.answer
    raise ModelError("the workflow ended without an answer")  # pragma: no cover
