"""A loopback OpenAI-compatible chat endpoint for tests: plans by tool call, streams answers
slowly, and records how each streamed answer ended (ran to the end, or stopped early
because its client, citewise, closed the connection). The structured calls (plan, grade,
rewrite) can be made slow too, recorded the same way per call kind."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse


class LoopbackModel:
    """``app`` streams ``tokens`` pieces ``gap`` seconds apart per streamed request."""

    def __init__(
        self,
        tokens: int = 60,
        gap: float = 0.05,
        slow_calls: frozenset[str] = frozenset(),
        call_time: float = 3.0,
    ) -> None:
        self.tokens = tokens
        self.gap = gap
        self.slow_calls = slow_calls  # tool names (Plan, Grade, Rewrite) answered slowly
        self.call_time = call_time
        # Per tool name: slow calls answered in full, left by their client, being answered.
        self.calls_finished: dict[str, int] = {}
        self.calls_stopped: dict[str, int] = {}
        self.calls_running = 0
        self.finished = 0  # streams that sent every token
        self.stopped = 0  # streams whose client left first
        self.running = 0
        self._lock = threading.Lock()
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self._complete)

    def _count(self, **changes: int) -> None:
        with self._lock:
            for name, change in changes.items():
                setattr(self, name, getattr(self, name) + change)

    async def _complete(self, request: Request) -> Any:
        body = await request.json()
        last = next((m["content"] for m in reversed(body["messages"]) if m["role"] == "user"), "")
        if not body.get("stream"):
            name = _tool_name(body)
            if name in self.slow_calls and not await self._slow_call(request, name):
                return JSONResponse({}, status_code=499)  # nobody reads it
            return JSONResponse(_tool_reply(body, last))
        return StreamingResponse(self._stream(request), media_type="text/event-stream")

    async def _stream(self, request: Request) -> AsyncIterator[str]:
        self._count(running=1)
        sent = 0
        try:
            for sent in range(1, self.tokens + 1):
                yield _chunk({"content": f"word{sent} "})
                await asyncio.sleep(self.gap)
                if await request.is_disconnected():
                    return
            yield "data: [DONE]\n\n"
        finally:
            done = sent == self.tokens
            self._count(running=-1, finished=int(done), stopped=int(not done))

    async def _slow_call(self, request: Request, name: str) -> bool:
        """Take ``call_time`` seconds to answer; False when the client left first."""
        with self._lock:
            self.calls_running += 1
        answered = False
        try:
            deadline = time.monotonic() + self.call_time
            while time.monotonic() < deadline:
                await asyncio.sleep(0.05)
                if await request.is_disconnected():
                    return False
            answered = True
            return True
        finally:
            with self._lock:
                self.calls_running -= 1
                counts = self.calls_finished if answered else self.calls_stopped
                counts[name] = counts.get(name, 0) + 1

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no stream runs (True), or ``timeout`` seconds (False)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.running == 0 and self.calls_running == 0:
                return True
            time.sleep(0.05)
        return self.running == 0 and self.calls_running == 0


def _chunk(delta: dict[str, Any]) -> str:
    payload = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "loopback",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }
    return f"data: {json.dumps(payload)}\n\n"


def _tool_name(body: dict[str, Any]) -> str:
    tools = body.get("tools") or []
    return str(tools[0]["function"]["name"]) if tools else ""


def _tool_reply(body: dict[str, Any], last: Any) -> dict[str, Any]:
    """A plan searching the question as written (a tool call when tools are offered); a grade
    of "no" (so the agentic workflow rewrites) and a rewrite to the question as written."""
    name = _tool_name(body)
    query = str(last)[:200] or "docs"
    fields: dict[str, Any] = {
        "Grade": {"relevant": "no"},
        "Rewrite": {"query": query},
        # A search option's calls: HyDE, multi-query and step-back rewrites, listwise rerank.
        "HypotheticalPassage": {"passage": query},
        "QueryVariants": {"queries": [query]},
        "StepBackQuestion": {"question": query},
        "Ranking": {"order": [1]},
    }.get(name, {"needs_docs": True, "queries": [query]})
    arguments = json.dumps(fields)
    message: dict[str, Any] = {"role": "assistant", "content": arguments}
    if name:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": name, "arguments": arguments}}
            ],
        }
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "loopback",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
