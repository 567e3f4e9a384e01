"""Test-only doubles: a scripted chat model and a scripted OpenAI-compatible HTTP endpoint.

Nothing in citewise uses these to answer users. They exist so tests (and load checks) can
drive the workflows deterministically: :class:`ScriptedChatModel` is an in-process LangChain
chat model that records every call it receives; :class:`OpenAIStub` serves scripted replies
over real HTTP on 127.0.0.1 (``/v1/chat/completions``, plain JSON or SSE streaming, text or
tool calls), so the real ``langchain-openai`` client path is exercised.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    convert_to_messages,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field

_PIECES = re.compile(r"\s*\S+\s*|\s+")


def pieces(text: str) -> list[str]:
    """``text`` cut into word-sized pieces that join back into it (a stream's deltas)."""
    return _PIECES.findall(text)


@dataclass(frozen=True)
class ScriptedCall:
    """One call a scripted model received: ``schema`` is set for structured calls."""

    messages: list[BaseMessage]
    schema: type[BaseModel] | None
    tags: list[str]
    temperature: float | None
    tools: tuple[str, ...] = ()
    """The names of the tools bound for this call (``bind_tools``), if any."""

    @property
    def kind(self) -> str:
        """The schema's name (``Plan``, ``Grade``, ``Rewrite``), ``tools`` for a call with
        tools bound, or ``answer`` for text."""
        if self.tools:
            return "tools"
        return self.schema.__name__ if self.schema is not None else "answer"

    @property
    def system(self) -> str:
        return "\n".join(m.text for m in self.messages if isinstance(m, SystemMessage))

    @property
    def last(self) -> str:
        """The text of the last user message."""
        return next(m.text for m in reversed(self.messages) if isinstance(m, HumanMessage))


Reply = Callable[[ScriptedCall], Any]


def script(
    *,
    plan: Reply | Mapping[str, Any] | None = None,
    answer: Reply | str = "The documentation does not say.",
    grade: Reply | str = "yes",
    rewrite: Reply | str = "rewritten query",
    tools: Reply | None = None,
) -> Reply:
    """A script that replies by kind of call; each reply is a constant or a function of it.

    ``plan`` defaults to searching the last message as written; so does ``tools`` (a call
    with tools bound: a list of ``(tool name, arguments)`` calls, or text for none), which
    calls the first bound tool with ``{"query": the last message}``.
    """

    def reply(call: ScriptedCall) -> Any:
        chosen: Any = {
            "Plan": plan or (lambda c: {"needs_docs": True, "queries": [c.last]}),
            "tools": tools or (lambda c: [(c.tools[0], {"query": c.last})]),
            "Grade": grade if callable(grade) else {"relevant": grade},
            "Rewrite": rewrite if callable(rewrite) else {"query": rewrite},
            "answer": answer,
        }.get(call.kind)
        if chosen is None:
            raise AssertionError(f"no scripted reply for a {call.kind} call")
        return chosen(call) if callable(chosen) else chosen

    return reply


def _tags(run: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None) -> list[str]:
    return list(run.tags) if run is not None else []


class ScriptedChatModel(BaseChatModel):
    """A deterministic chat model for tests: ``reply(call)`` decides every reply.

    Structured calls get ``reply``'s dict (or model instance) validated against the schema;
    text calls get its string, streamed in word-sized pieces. Every call is appended to
    ``calls``; copies (``model_copy``) share that list, so one list sees every call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    reply: Reply
    calls: list[ScriptedCall] = Field(default_factory=list)
    temperature: float | None = 0.7

    @property
    def _llm_type(self) -> str:
        return "citewise-scripted"

    def _record(self, messages: Sequence[BaseMessage], schema: Any, tags: list[str]) -> Any:
        call = ScriptedCall(list(messages), schema, tags, self.temperature)
        self.calls.append(call)
        return self.reply(call)

    def _text(self, messages: list[BaseMessage], tags: list[str]) -> str:
        text = self._record(messages, None, tags)
        if not isinstance(text, str):
            raise TypeError(f"a text call needs a str reply, not {type(text).__name__}")
        return text

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = AIMessage(content=self._text(messages, _tags(run_manager)))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for piece in pieces(self._text(messages, _tags(run_manager))):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    # Native async methods, as a real client's (ChatOpenAI's) are: without them LangChain
    # runs the sync ones on a worker thread, one hop per streamed token, and the server
    # benchmark would time LangChain's executor instead of the server. The reply itself is
    # computed on a worker thread (one hop per call): a test's reply may block.
    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = await asyncio.to_thread(self._text, messages, _tags(run_manager))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        text = await asyncio.to_thread(self._text, messages, _tags(run_manager))
        for piece in pieces(text):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                await run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    def bind_tools(
        self, tools: Sequence[Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Calls that reply with tool calls: ``reply`` gives ``[(name, arguments), …]`` (or
        text, for a reply that calls no tool)."""
        from langchain_core.utils.function_calling import convert_to_openai_tool

        names = tuple(convert_to_openai_tool(tool)["function"]["name"] for tool in tools)

        def run(value: LanguageModelInput, config: RunnableConfig) -> AIMessage:
            messages = (
                [HumanMessage(value)] if isinstance(value, str) else convert_to_messages(value)
            )
            call = ScriptedCall(
                list(messages), None, list(config.get("tags") or []), self.temperature, names
            )
            self.calls.append(call)
            result = self.reply(call)
            if isinstance(result, str):
                return AIMessage(content=result)
            tool_calls = [
                {"name": name, "args": dict(args), "id": f"call_{n}", "type": "tool_call"}
                for n, (name, args) in enumerate(result)
            ]
            return AIMessage(content="", tool_calls=tool_calls)

        async def arun(value: LanguageModelInput, config: RunnableConfig) -> AIMessage:
            return await asyncio.to_thread(run, value, config)

        return RunnableLambda(run, afunc=arun)

    def with_structured_output(  # type: ignore[override]
        self, schema: type[BaseModel], **kwargs: Any
    ) -> Runnable[LanguageModelInput, BaseModel]:
        def run(value: LanguageModelInput, config: RunnableConfig) -> BaseModel:
            messages = (
                [HumanMessage(value)] if isinstance(value, str) else convert_to_messages(value)
            )
            result = self._record(messages, schema, list(config.get("tags") or []))
            return result if isinstance(result, schema) else schema.model_validate(result)

        async def arun(value: LanguageModelInput, config: RunnableConfig) -> BaseModel:
            return await asyncio.to_thread(run, value, config)

        return RunnableLambda(run, afunc=arun)


@dataclass(frozen=True)
class StubReply:
    """A scripted endpoint reply: text, a tool call (name, arguments), or an HTTP error."""

    content: str = ""
    tool_call: tuple[str, Mapping[str, Any]] | None = None
    status: int = 200


@dataclass
class OpenAIStub:
    """A scripted OpenAI-compatible ``/v1/chat/completions`` server on 127.0.0.1 (test only).

    Use as a context manager; ``base_url`` is the ``/v1`` URL for a client and ``requests``
    the JSON bodies received, in order. ``script(body)`` chooses each reply.
    """

    script: Callable[[dict[str, Any]], StubReply]
    requests: list[dict[str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the stub first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> OpenAIStub:
        stub = self

        class Handler(_StubHandler):
            owner = stub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class _StubHandler(BaseHTTPRequestHandler):
    owner: OpenAIStub

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the default handler logs every request to stderr."""

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.owner.requests.append(body)
        reply = self.owner.script(body)
        if reply.status != 200:
            error = {"message": reply.content or "scripted error", "type": "invalid_request_error"}
            self._json(reply.status, {"error": error})
        elif body.get("stream"):
            self._sse(body, reply)
        else:
            self._json(200, _completion(body, reply))

    def _json(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, body: Mapping[str, Any], reply: StubReply) -> None:
        # HTTP/1.0 without a length: the stream ends when the connection closes.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        deltas += [{"content": piece} for piece in pieces(reply.content)]
        if reply.tool_call is not None:
            name, arguments = reply.tool_call
            call = {"index": 0, "id": "call_1", "type": "function"}
            deltas.append({"tool_calls": [call | {"function": {"name": name, "arguments": ""}}]})
            for piece in pieces(json.dumps(arguments)):
                deltas.append({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        finish = "tool_calls" if reply.tool_call else "stop"
        for delta in deltas:
            self._event(_chunk(body, delta, None))
        self._event(_chunk(body, {}, finish))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _event(self, payload: Mapping[str, Any]) -> None:
        self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        self.wfile.flush()


def _chunk(body: Mapping[str, Any], delta: Mapping[str, Any], finish: str | None) -> Any:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model", "stub"),
        "choices": [choice],
    }


def _completion(body: Mapping[str, Any], reply: StubReply) -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.tool_call is not None:
        name, arguments = reply.tool_call
        function = {"name": name, "arguments": json.dumps(arguments)}
        message["tool_calls"] = [{"id": "call_1", "type": "function", "function": function}]
    choice = {
        "index": 0,
        "message": message,
        "finish_reason": "tool_calls" if reply.tool_call else "stop",
    }
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "stub"),
        "choices": [choice],
        "usage": usage,
    }
