"""The OpenAI-compatible API: ``/v1/models``, ``/v1/responses`` and ``/v1/chat/completions``."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from contextvars import ContextVar
from dataclasses import replace
from functools import cache
from typing import Any, cast

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse

from citewise.asyncbridge import in_own_task
from citewise.errors import CitewiseError
from citewise.kb import (
    AGENTIC,
    AGENTIC_TOOLS,
    RAG,
    WORKFLOWS,
    Done,
    Event,
    Resolved,
    Status,
    TextDelta,
    workflow_description,
)
from citewise.kb.structured import reshape
from citewise.models import Answer
from citewise.server.auth import api_keys_of, require_api_key
from citewise.server.departure import unless_client_leaves
from citewise.server.errors import APIError, from_citewise_error
from citewise.server.feedback import remember_answer
from citewise.server.formats import OutputFormat, chat_format, responses_format
from citewise.server.links import LinkRewriter, document_url, is_relative, rewrite_links
from citewise.server.metrics import Metrics
from citewise.server.requests import (
    ChatRequest,
    Message,
    ResponsesRequest,
    chat_messages,
    chat_metadata,
    check_model,
    parse_client_settings,
    resolve,
    responses_messages,
    settings_schema,
)
from citewise.server.runtime import Runtime, runtime_of
from citewise.server.stream import (
    ChatChunks,
    Payload,
    ResponseEvents,
    chat_annotations,
    citewise_field,
    no_usage,
    sse,
)
from citewise.server.tasks import task_reply
from citewise.server.unsupported import check_chat_parameters, check_responses_parameters
from citewise.server.widget import pinned

log = logging.getLogger(__name__)

router = APIRouter(prefix="/v1", dependencies=[Depends(require_api_key)])

DESCRIPTIONS = {
    RAG: (
        "Plans up to three search queries, searches the docs once and writes a cited answer. "
        "With no chat model configured it answers extractively: the best-matching passages, "
        "quoted and cited."
    ),
    AGENTIC: (
        "Searches, grades what it found and rewrites the search once when it falls short, "
        "then writes a cited answer (extractive, like citewise-rag, with no chat model)."
    ),
    AGENTIC_TOOLS: (
        "Like citewise-agentic, but the chat model searches by calling a search_docs tool "
        "and decides again after each rewrite (the chat model must support tool calling)."
    ),
}
_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _model_card(model: str, runtime: Runtime) -> dict[str, Any]:
    return {
        "id": model,
        "object": "model",
        "created": 0,
        "owned_by": "citewise",
        "description": DESCRIPTIONS.get(model) or workflow_description(model),
        "citewise_settings": settings_schema(runtime),
    }


@router.get("/models")
async def list_models(request: Request) -> dict[str, Any]:
    runtime = runtime_of(request)
    cards = await asyncio.to_thread(lambda: [_model_card(m, runtime) for m in WORKFLOWS])
    return {"object": "list", "data": cards}


@router.get("/models/{model_id}")
async def get_model(model_id: str, request: Request) -> dict[str, Any]:
    check_model(model_id, WORKFLOWS)
    runtime = runtime_of(request)
    return await asyncio.to_thread(_model_card, model_id, runtime)


class _Usage:
    """Tokens the chat model reported (``usage_metadata``) over every call of one answer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.prompt = self.completion = 0

    def add(self, input_tokens: int, output_tokens: int) -> None:
        with self._lock:
            self.prompt += input_tokens
            self.completion += output_tokens

    def as_json(self) -> Payload:
        return {
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
        }


_USAGE: ContextVar[Any] = ContextVar("citewise_usage", default=None)


@cache
def _usage_handler() -> Callable[[_Usage], Any]:
    """The LangChain callback handler that counts into a :class:`_Usage`. The first call
    lets LangChain add the one ``_USAGE`` holds to every model call made in its context
    (the answer's task inherits the request's context)."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.tracers.context import register_configure_hook

    class Handler(BaseCallbackHandler):
        # Inline: otherwise LangChain hands every callback of the run (each streamed token)
        # to a worker thread, only for this handler to ignore all but the last.
        run_inline = True

        def __init__(self, usage: _Usage) -> None:
            self.usage = usage

        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            for generations in response.generations:
                for generation in generations:
                    found = getattr(getattr(generation, "message", None), "usage_metadata", None)
                    if found:
                        self.usage.add(found.get("input_tokens", 0), found.get("output_tokens", 0))

    register_configure_hook(_USAGE, inheritable=True)
    return Handler


class _Run:
    """One validated request, ready to answer: conversation, knowledge base, search options."""

    def __init__(
        self,
        request: Request,
        model: str,
        messages: list[Message],
        metadata: Any,
        output: OutputFormat | None = None,
    ):
        self.runtime = runtime_of(request)
        self.metrics: Metrics = request.app.state.metrics
        self.route = request.url.path
        self.base_url = str(request.base_url)
        self.model = model
        self.messages = messages
        self.client = pinned(request, parse_client_settings(metadata))
        self.request = request
        self.response_id = ""  # set by the route: what a rating of the answer names
        self.usage = _Usage()
        self.task: str | None = None
        self.started = time.time()
        self.keys = bool(api_keys_of(request))
        self.uploaded: dict[str, str] = {}  # stored URL (no fragment) → doc_id of uploads
        self.links = LinkRewriter(self.publish)
        self.output = output  # JSON the client asked for instead of Markdown
        self.chat_model: Any = None

    async def prepare(self) -> None:
        """Open the knowledge base and resolve the options (400 on an unknown ``kb`` or
        ``scope``) before the status line goes out."""
        self.kb, self.options = await asyncio.to_thread(resolve, self.runtime, self.client)
        self.uploaded = await asyncio.to_thread(_uploaded_documents, self.options)
        # Made once per library; made here, off the event loop, as a local model loads slowly.
        model = await asyncio.to_thread(lambda: self.kb.model)
        if self.output is not None:
            # The model that writes the answer also writes its JSON.
            self.chat_model = await asyncio.to_thread(
                self.kb.model_for, self.options.options.chat_model
            )
            if self.chat_model is None:
                raise self.output.without_model()
        if model is None:
            # Open WebUI's title and tag prompts get a direct reply, not quoted passages.
            self.task = task_reply(self.messages[-1]["content"])

    def events(self) -> AsyncGenerator[Event, None]:
        """The answer's events; model calls made for it count into :attr:`usage`. Call it
        where the events are iterated: their task inherits that context."""
        if self.task is not None:
            return _task_events(self.task)
        _USAGE.set(_usage_handler()(self.usage))
        events = self.kb.astream(
            self.messages, self.options, workflow=self.model, on_search=self.metrics.count_search
        )
        if self.output is not None:
            events = self._reshaped(events, self.output)
        return in_own_task(cast(AsyncGenerator[Event, None], events))

    async def _reshaped(
        self, events: AsyncIterator[Event], output: OutputFormat
    ) -> AsyncGenerator[Event, None]:
        """The events of an answer given as the client's JSON: the statuses, then the
        finished Markdown answer reshaped (its text held back: it is not the output)."""
        async for event in events:
            if isinstance(event, Done):
                assert self.chat_model is not None
                question = str(self.messages[-1]["content"])
                answer = await reshape(
                    self.chat_model, self.published(event.answer), output.response_format,
                    question,
                )  # fmt: skip
                yield TextDelta(answer.text)
                yield Done(answer)
            elif not isinstance(event, TextDelta):
                yield event

    async def answer(self) -> Answer:
        """The finished answer (an error raises, and the middleware counts its status);
        cancelled, model calls and all, when the client leaves first."""
        return await unless_client_leaves(self.request, self._answer())

    async def _answer(self) -> Answer:
        async with aclosing(self.events()) as events:
            async for event in events:
                if isinstance(event, Done):
                    return await self.finished(event.answer)
        raise APIError(500, "the workflow ended without an answer", code="server_error")

    async def finished(self, answer: Answer) -> Answer:
        """:meth:`published`, remembered for a reader's rating of :attr:`response_id`."""
        answer = self.published(answer)
        if self.task is None:  # Open WebUI's title and tag prompts are nobody's question
            question = self.messages[-1]["content"]
            await asyncio.to_thread(
                remember_answer, self.request, self.response_id, answer,
                kb=self.kb.name, workflow=self.model, question=question,
            )  # fmt: skip
        return answer

    def publish(self, url: str) -> str | None:
        """The published URL of a stored URL of an uploaded file (``policies.pdf#page=1``):
        the document's content route, absolute, signed when keys guard it (None: ``url``
        is published already, or names no document)."""
        if not is_relative(url):
            return None
        path, _, fragment = url.partition("#")  # the fragment: the section, for the reader
        doc_id = self.uploaded.get(path)
        if doc_id is None:
            return None
        signed = self.runtime.links.query(self.kb.name, doc_id, self.started) if self.keys else ""
        return document_url(self.base_url, self.kb.name, doc_id, fragment, signed)

    def published(self, answer: Answer) -> Answer:
        """``answer`` with each link to an uploaded file, in its text and its citations,
        as :meth:`publish` makes it: a client shows and opens the same absolute URL."""
        for hit in answer.hits:  # documents added since the run began
            if is_relative(hit.chunk.url):
                self.uploaded.setdefault(hit.chunk.url.partition("#")[0], hit.chunk.doc_id)
        text, moved = rewrite_links(answer.text, self.publish)
        citations = tuple(
            replace(
                citation,
                url=self.publish(citation.url) or citation.url,
                start_index=moved(citation.start_index),
                end_index=moved(citation.end_index),
            )
            for citation in answer.citations
        )
        return replace(answer, text=text, citations=citations)

    def usage_json(self) -> Payload:
        return no_usage() if self.task is not None else self.usage.as_json()

    def failure(self, error: Exception) -> APIError:
        """The API error for a failure mid-stream (the status line is already sent)."""
        self.metrics.errors.labels(self.route, type(error).__name__).inc()
        if isinstance(error, CitewiseError):
            return from_citewise_error(error)
        log.exception("answer failed mid-stream", exc_info=error)
        return APIError(500, "internal server error", code="server_error")


def _uploaded_documents(request: Resolved) -> dict[str, str]:
    """The stored URL → doc_id of each document of the request's knowledge base published
    by this server (read from the store the request opened)."""
    if request.store is None:  # a release not built yet: nothing uploaded, nothing to build
        return {}
    return {doc.url: doc.doc_id for doc in request.store.documents() if is_relative(doc.url)}


async def _task_events(reply: str) -> AsyncGenerator[Event, None]:
    yield TextDelta(reply)
    yield Done(Answer(text=reply, citations=(), hits=(), kind="extractive"))


async def _stream(
    run: _Run, on_event: Callable[[Event], list[str]], on_error: Callable[[APIError], list[str]]
) -> AsyncIterator[str]:
    """The SSE text of a run. Starlette cancels this generator when the client disconnects;
    closing the events cancels the run's task (see ``in_own_task``)."""
    try:
        async with aclosing(run.events()) as events:
            async for event in events:
                if isinstance(event, Done):  # published and remembered: on_event sends it
                    event = Done(await run.finished(event.answer))
                for text in on_event(event):
                    yield text
    except Exception as error:  # the status line went out: report it in the stream
        for text in on_error(run.failure(error)):
            yield text


@router.post("/responses", response_model=None)
async def create_response(
    body: ResponsesRequest, request: Request
) -> JSONResponse | StreamingResponse:
    check_model(body.model, WORKFLOWS)
    check_responses_parameters(body.model_extra or {})
    output = responses_format(body.model_extra or {})
    run = _Run(request, body.model, responses_messages(body), body.metadata, output)
    await run.prepare()
    with_results = "file_search_call.results" in (body.include or [])
    builder = ResponseEvents(body.model, body.metadata, with_results=with_results)
    run.response_id = builder.id
    if not body.stream:
        answer = await run.answer()
        return JSONResponse(builder.final(answer, run.usage_json()))

    def on_event(event: Event) -> list[str]:
        if isinstance(event, Status):
            payloads = builder.status(event.text)
        elif isinstance(event, TextDelta):
            text = run.links.feed(event.text)
            payloads = builder.delta(text) if text else []
        else:
            held = run.links.flush()
            payloads = builder.delta(held) if held else []
            payloads += builder.done(event.answer, run.usage_json())
        return [sse(payload) for payload in payloads]

    def on_error(error: APIError) -> list[str]:
        return [sse(payload) for payload in builder.failed(error.message, "server_error")]

    async def body_stream() -> AsyncIterator[str]:
        for payload in builder.start():
            yield sse(payload)
        async for text in _stream(run, on_event, on_error):
            yield text

    return StreamingResponse(body_stream(), media_type="text/event-stream", headers=_SSE_HEADERS)


@router.post("/chat/completions", response_model=None)
async def create_chat_completion(
    body: ChatRequest, request: Request
) -> JSONResponse | StreamingResponse:
    check_model(body.model, WORKFLOWS)
    check_chat_parameters(body.model_extra or {})
    output = chat_format(body.model_extra or {})
    run = _Run(request, body.model, chat_messages(body), chat_metadata(body), output)
    await run.prepare()
    chunks = ChatChunks(body.model)
    run.response_id = chunks.id
    if not body.stream:
        answer = await run.answer()
        return JSONResponse(chunks.completion(answer, run.usage_json()))

    streamed: list[str] = []

    def on_event(event: Event) -> list[str]:
        # Statuses stay out of chat content (clients send content back as history); asked
        # for, they go as reasoning, which clients show apart and do not send back.
        if isinstance(event, Status):
            return (
                [sse(chunks.status(event.text), named=False)]
                if run.client.show_status or run.runtime.options.show_status
                else []
            )
        if isinstance(event, TextDelta) and event.text:
            text = run.links.feed(event.text)
            streamed.append(text)
            return [sse(chunks.chunk({"content": text}), named=False)] if text else []
        if isinstance(event, Done):
            streamed.append(run.links.flush())
            answer = event.answer
            text, sent = answer.text, "".join(streamed)
            final: dict[str, Any] = {"annotations": chat_annotations(answer)}
            if len(text) > len(sent) and text.startswith(sent):
                final["content"] = text[len(sent) :]
            out = [sse({**chunks.chunk(final, "stop"), **citewise_field(answer)}, named=False)]
            if body.include_usage:
                out.append(sse(chunks.usage_chunk(run.usage_json()), named=False))
            return [*out, "data: [DONE]\n\n"]
        return []

    def on_error(error: APIError) -> list[str]:
        return [sse(error.body(), named=False), "data: [DONE]\n\n"]

    async def body_stream() -> AsyncIterator[str]:
        yield sse(chunks.chunk({"role": "assistant", "content": ""}), named=False)
        async for text in _stream(run, on_event, on_error):
            yield text

    return StreamingResponse(body_stream(), media_type="text/event-stream", headers=_SSE_HEADERS)
