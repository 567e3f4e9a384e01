"""Answer a conversation from the docs, streaming typed events: statuses, text, the final Answer.

This is the one entry point the CLI, ``KnowledgeBase.ask`` and the API server drive::

    async for event in astream_answer(messages, kb, model, workflow="citewise-rag"):
        match event:
            case Status(text=text): ...     # "Searching the docs: …" (commentary)
            case TextDelta(text=text): ...  # the next piece of the answer
            case Done(answer=answer): ...   # text, url_citation annotations, hits, queries

Cancelling the iteration (a client that disconnects) cancels the run: no model tokens are
requested after it.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from citewise.config import RequestSettings
from citewise.errors import ConfigurationError, ModelError
from citewise.extractive import extractive_answer
from citewise.graph.events import Done, Event, Status, TextDelta
from citewise.models import Answer

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AnyMessage, MessageLikeRepresentation

    from citewise.graph.state import Retriever

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
    settings: RequestSettings | None = None,
    workflow: str = DEFAULT_WORKFLOW,
) -> AsyncIterator[Event]:
    """Answer the conversation's last user message, yielding events as they happen.

    Args:
        messages: the question, or the conversation (OpenAI-style ``{"role", "content"}``
            dicts or LangChain messages) ending with the user's message.
        retriever: what to search, usually a ``KnowledgeBase``.
        model: the chat model; None gives the extractive answer (the passages that best
            match the last message, quoted and cited).
        settings: scope, ``k`` and search mode for this request.
        workflow: ``citewise-rag`` (plan → retrieve → answer) or ``citewise-agentic``.

    Yields:
        ``Status`` updates, ``TextDelta`` pieces of the answer, then exactly one ``Done``.

    Raises:
        ConfigurationError: an unknown workflow.
        ModelError: the chat model failed.
    """
    settings = settings or RequestSettings()
    if workflow not in WORKFLOWS:
        raise ConfigurationError(f"unknown model {workflow!r} (known: {', '.join(WORKFLOWS)})")
    turns = conversation(messages)
    if model is None:
        async for event in _extractive(turns[-1].text, retriever, settings):
            yield event
        return
    async for event in _workflow(turns, retriever, model, settings, workflow):
        yield event


async def _extractive(
    question: str, retriever: Retriever, settings: RequestSettings
) -> AsyncIterator[Event]:
    from citewise.graph.nodes import search_status

    yield Status(search_status(question, settings))
    hits = await asyncio.to_thread(
        retriever.search, question, k=settings.k, mode=settings.mode, scope=settings.scope
    )
    result = extractive_answer(question, hits)
    yield TextDelta(result.text)
    yield Done(result)


async def _workflow(
    turns: list[AnyMessage],
    retriever: Retriever,
    model: BaseChatModel,
    settings: RequestSettings,
    workflow: str,
) -> AsyncIterator[Event]:
    from citewise.graph.agentic import agentic_graph
    from citewise.graph.rag import rag_graph
    from citewise.graph.state import Deps, GraphState
    from citewise.llm import at_temperature_zero

    graph = agentic_graph() if workflow == AGENTIC else rag_graph()
    deps = Deps(model=model, planner=at_temperature_zero(model), retriever=retriever)
    state: GraphState = {"messages": turns, "settings": settings}
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
    settings: RequestSettings | None = None,
    workflow: str = DEFAULT_WORKFLOW,
) -> Answer:
    """The finished answer of :func:`astream_answer`."""
    async for event in astream_answer(
        messages, retriever, model, settings=settings, workflow=workflow
    ):
        if isinstance(event, Done):
            return event.answer
    raise ModelError("the workflow ended without an answer")  # pragma: no cover


def stream_answer(
    messages: str | Sequence[MessageLikeRepresentation],
    retriever: Retriever,
    model: BaseChatModel | None,
    *,
    settings: RequestSettings | None = None,
    workflow: str = DEFAULT_WORKFLOW,
) -> Iterator[Event]:
    """:func:`astream_answer` for synchronous code (runs it on an event loop in a thread).

    Closing the iterator early cancels the run.
    """
    return _iterate_in_thread(
        lambda: astream_answer(messages, retriever, model, settings=settings, workflow=workflow)
    )


def answer(
    messages: str | Sequence[MessageLikeRepresentation],
    retriever: Retriever,
    model: BaseChatModel | None,
    *,
    settings: RequestSettings | None = None,
    workflow: str = DEFAULT_WORKFLOW,
) -> Answer:
    """The finished answer, synchronously (safe to call inside a running event loop too)."""
    for event in stream_answer(messages, retriever, model, settings=settings, workflow=workflow):
        if isinstance(event, Done):
            return event.answer
    raise ModelError("the workflow ended without an answer")  # pragma: no cover


_END = object()


def _iterate_in_thread(make: Callable[[], AsyncIterator[Event]]) -> Iterator[Event]:
    """Iterate an async iterator from synchronous code, on a private loop in a worker thread.

    A private loop (not ``asyncio.run`` here) keeps this usable from code that already runs
    an event loop, such as a notebook or a server's synchronous handler.
    """
    items: queue.SimpleQueue[Any] = queue.SimpleQueue()

    async def pump() -> None:
        try:
            async for event in make():
                items.put(event)
        except BaseException as error:  # handed to the consumer's thread and raised there
            items.put(error)
        finally:
            items.put(_END)

    loop = asyncio.new_event_loop()
    task = loop.create_task(pump())

    def run() -> None:
        try:
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            pass
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())

    thread = threading.Thread(target=run, name="citewise-answer", daemon=True)
    thread.start()
    try:
        while (item := items.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join()
        loop.close()
