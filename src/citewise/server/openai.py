"""The OpenAI-compatible API: ``/v1/models``, ``/v1/responses`` and ``/v1/chat/completions``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any, cast

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse

from citewise.asyncbridge import in_own_task
from citewise.errors import CitewiseError
from citewise.kb import AGENTIC, RAG, WORKFLOWS, Done, Event, Status, TextDelta
from citewise.models import Answer
from citewise.server.auth import require_api_key
from citewise.server.errors import APIError, from_citewise_error
from citewise.server.metrics import Metrics
from citewise.server.requests import (
    ChatRequest,
    Message,
    ResponsesRequest,
    chat_messages,
    check_model,
    parse_client_settings,
    resolve,
    responses_messages,
    settings_schema,
)
from citewise.server.runtime import Runtime, runtime_of
from citewise.server.stream import ChatChunks, ResponseEvents, chat_annotations, sse

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
}
_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _model_card(model: str, runtime: Runtime) -> dict[str, Any]:
    return {
        "id": model,
        "object": "model",
        "created": 0,
        "owned_by": "citewise",
        "description": DESCRIPTIONS[model],
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


class _Run:
    """One validated request, ready to answer: conversation, knowledge base, search options."""

    def __init__(self, request: Request, model: str, messages: list[Message], metadata: Any):
        self.runtime = runtime_of(request)
        self.metrics: Metrics = request.app.state.metrics
        self.route = request.url.path
        self.model = model
        self.messages = messages
        self.client = parse_client_settings(metadata)

    async def prepare(self) -> None:
        """Open the knowledge base and resolve the options (400 on an unknown ``kb`` or
        ``scope``) before the status line goes out."""
        self.kb, self.options = await asyncio.to_thread(resolve, self.runtime, self.client)
        # Made once per library; made here, off the event loop, as a local model loads slowly.
        await asyncio.to_thread(lambda: self.kb.model)

    def events(self) -> AsyncGenerator[Event, None]:
        events = self.kb.astream(
            self.messages, self.options, workflow=self.model, on_search=self.metrics.count_search
        )
        return in_own_task(cast(AsyncGenerator[Event, None], events))

    async def answer(self) -> Answer:
        """The finished answer (an error raises, and the middleware counts its status)."""
        async with aclosing(self.events()) as events:
            async for event in events:
                if isinstance(event, Done):
                    return event.answer
        raise APIError(500, "the workflow ended without an answer", code="server_error")

    def failure(self, error: Exception) -> APIError:
        """The API error for a failure mid-stream (the status line is already sent)."""
        self.metrics.errors.labels(self.route, type(error).__name__).inc()
        if isinstance(error, CitewiseError):
            return from_citewise_error(error)
        log.exception("answer failed mid-stream", exc_info=error)
        return APIError(500, "internal server error", code="server_error")


async def _stream(
    run: _Run, on_event: Callable[[Event], list[str]], on_error: Callable[[APIError], list[str]]
) -> AsyncIterator[str]:
    """The SSE text of a run. Starlette cancels this generator when the client disconnects;
    closing the events cancels the run's task (see ``in_own_task``)."""
    try:
        async with aclosing(run.events()) as events:
            async for event in events:
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
    run = _Run(request, body.model, responses_messages(body), body.metadata)
    await run.prepare()
    with_results = "file_search_call.results" in (body.include or [])
    builder = ResponseEvents(body.model, body.metadata, with_results=with_results)
    if not body.stream:
        return JSONResponse(builder.final(await run.answer()))

    def on_event(event: Event) -> list[str]:
        if isinstance(event, Status):
            payloads = builder.status(event.text)
        elif isinstance(event, TextDelta):
            payloads = builder.delta(event.text)
        else:
            payloads = builder.done(event.answer)
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
    run = _Run(request, body.model, chat_messages(body), body.metadata)
    await run.prepare()
    chunks = ChatChunks(body.model)
    if not body.stream:
        return JSONResponse(chunks.completion(await run.answer()))

    streamed: list[str] = []

    def on_event(event: Event) -> list[str]:
        # Statuses stay out of chat content: clients send content back as history.
        if isinstance(event, TextDelta) and event.text:
            streamed.append(event.text)
            return [sse(chunks.chunk({"content": event.text}), named=False)]
        if isinstance(event, Done):
            text, sent = event.answer.text, "".join(streamed)
            final: dict[str, Any] = {"annotations": chat_annotations(event.answer)}
            if len(text) > len(sent) and text.startswith(sent):
                final["content"] = text[len(sent) :]
            return [sse(chunks.chunk(final, "stop"), named=False), "data: [DONE]\n\n"]
        return []

    def on_error(error: APIError) -> list[str]:
        return [sse(error.body(), named=False), "data: [DONE]\n\n"]

    async def body_stream() -> AsyncIterator[str]:
        yield sse(chunks.chunk({"role": "assistant", "content": ""}), named=False)
        async for text in _stream(run, on_event, on_error):
            yield text

    return StreamingResponse(body_stream(), media_type="text/event-stream", headers=_SSE_HEADERS)
