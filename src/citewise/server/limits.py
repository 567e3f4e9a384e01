"""Request-body limits: a body over the limit is refused with a 413 before it is read whole,
and a JSON body nested too deeply or holding strings that cannot be text (a lone surrogate
escape, a NUL) is refused with a 400 naming the field before any route reads it.

Without a limit, a 20 MB ``input`` took 27 s to parse, stalled ``/healthz`` for 5.6 s and left
the server at 2.2 GB resident. JSON routes get ``CITEWISE_MAX_BODY_BYTES`` (default 2 MiB);
the document upload route gets ``CITEWISE_MAX_UPLOAD_BYTES`` (default 64 MiB; each file is
also held to the per-file limit).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citewise.config import environment
from citewise.errors import ConfigurationError
from citewise.server.errors import APIError
from citewise.server.receipt import ReceiptDeadlines

MIB = 1024 * 1024
DEFAULT_MAX_BODY_BYTES = 2 * MIB
DEFAULT_MAX_UPLOAD_BYTES = 64 * MIB
_UPLOAD = re.compile(r"^/v1/knowledge-bases/[^/]+/documents/?$")
# Arrays and objects inside each other: OpenAI bodies need 5 or 6 levels; Python's JSON
# decoder fails (RecursionError) past about 1,000, and each level is work for every reader.
DEFAULT_MAX_JSON_DEPTH = 32
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_FORMS = ("multipart/", "application/x-www-form-urlencoded")

__all__ = [
    "BodyLimits",
    "BodyLimitMiddleware",
    "JSONCheckMiddleware",
    "check_json_text",
    "check_json_value",
]


class BodyLimits:
    """The largest request body per kind of route, in bytes."""

    def __init__(
        self,
        body: int = DEFAULT_MAX_BODY_BYTES,
        upload: int = DEFAULT_MAX_UPLOAD_BYTES,
        depth: int = DEFAULT_MAX_JSON_DEPTH,
    ):
        self.body = body
        self.upload = upload
        self.depth = depth

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> BodyLimits:
        env = environment() if environ is None else environ
        depth = env.get("CITEWISE_MAX_JSON_DEPTH", "").strip()
        if depth and (not depth.isdigit() or not 2 <= int(depth) <= 500):
            raise ConfigurationError(
                f"CITEWISE_MAX_JSON_DEPTH must be a number from 2 to 500, not {depth!r}"
            )
        return cls(
            _bytes(env, "CITEWISE_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES),
            _bytes(env, "CITEWISE_MAX_UPLOAD_BYTES", DEFAULT_MAX_UPLOAD_BYTES),
            int(depth) if depth else DEFAULT_MAX_JSON_DEPTH,
        )

    def of(self, path: str) -> int:
        return self.upload if _UPLOAD.match(path) else self.body


def _bytes(env: Mapping[str, str], name: str, default: int) -> int:
    value = env.get(name)
    if value is None or not value.strip():
        return default
    if not value.strip().isdigit() or int(value) < 1024:
        raise ConfigurationError(f"{name} must be a number of bytes ≥ 1024, not {value!r}")
    return int(value)


class BodyLimitMiddleware:
    """Guards request bodies. Refuses a body over its route's limit: at once when
    ``Content-Length`` says so, else as soon as the streamed body passes it (the handler then
    sees a 413, not the body). Refuses a body that arrives too slowly with a 408 (the receipt
    deadlines of ``citewise.server.receipt``: a first deadline, then a minimum rate)."""

    def __init__(
        self, app: ASGIApp, limits: BodyLimits, deadlines: ReceiptDeadlines | None = None
    ) -> None:
        self.app = app
        self.limits = limits
        self.deadlines = deadlines or ReceiptDeadlines.from_env()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit = self.limits.of(scope["path"])
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse(limit)(scope, receive, send)
            return
        seen = 0
        refused = started = received = False
        loop = asyncio.get_running_loop()
        began = loop.time()

        async def limited() -> Message:
            nonlocal seen, refused, started, received
            if refused:
                return {"type": "http.disconnect"}
            if received:  # the body is in: waiting for a disconnect has no deadline
                return await receive()
            try:
                # asyncio.timeout, not wait_for: on 3.11 wait_for can lose a cancel.
                async with asyncio.timeout(self.deadlines.body_wait(seen, loop.time() - began)):
                    message = await receive()
            except TimeoutError:
                refused = True
                if not started:
                    started = True
                    await _too_slow(self.deadlines)(scope, receive, send)
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                received = not message.get("more_body", False)
                seen += len(message.get("body", b""))
                if seen > limit:
                    # Answer now, then tell the route the client left: it stops reading and
                    # whatever it still sends is dropped. (Raising instead would not do:
                    # frameworks turn a failed read into a 400 of their own.)
                    refused = True
                    if not started:
                        started = True
                        await _refuse(limit)(scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, guarded)
        except Exception:
            if not refused:
                raise


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


def _refuse(limit: int) -> ASGIApp:
    size = f"{limit / MIB:.1f} MiB" if limit >= MIB else f"{limit // 1024} KiB"
    error = APIError(
        413,
        f"request body too large: this server accepts at most {size} here",
        code="request_too_large",
    )
    return error.response()


def _too_slow(deadlines: ReceiptDeadlines) -> ASGIApp:
    error = APIError(
        408,
        f"request body too slow: this server waits {deadlines.body_timeout:g} s for a body, "
        f"then needs {deadlines.body_min_rate} bytes a second",
        code="request_timeout",
        headers={"Connection": "close"},  # what the client still sends is not read
    )
    return error.response()


class JSONCheckMiddleware:
    """Reads a JSON request body (already bounded by :class:`BodyLimitMiddleware`) and
    refuses it with a 400 when :func:`check_json_text` finds a problem; otherwise the route
    gets the body as sent. Form and upload bodies pass unread."""

    def __init__(self, app: ASGIApp, max_depth: int = DEFAULT_MAX_JSON_DEPTH) -> None:
        self.app = app
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        kind = _header(scope, b"content-type").lower()
        if kind.startswith(_FORMS):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left, or the body limit answered already
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problem = _problem(body, self.max_depth)
        if problem is not None:
            await problem.response()(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return ""


def _problem(body: bytes, max_depth: int) -> APIError | None:
    if not body.strip():
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        return APIError(
            400, f"the request body is not valid UTF-8 (at byte {error.start})", code="invalid_json"
        )
    try:
        check_json_text(text, "body", max_depth)
        value = json.loads(text)
    except APIError as error:
        return error
    except ValueError:
        return None  # the route's own parser answers with its 400
    try:
        check_json_value(value, "")
    except APIError as error:
        return error
    return None


def check_json_text(text: str, param: str, max_depth: int = DEFAULT_MAX_JSON_DEPTH) -> None:
    """Refuse JSON ``text`` whose arrays and objects nest deeper than ``max_depth``, before
    it is decoded (a deep document makes the decoder recurse; it is refused in time
    proportional to the depth, not the size).

    Raises:
        APIError: 400 naming ``param``.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = 0
    for char in brackets:
        depth += 1 if char in "[{" else -1
        if depth > max_depth:
            raise APIError(
                400,
                f"{param}: JSON nested more than {max_depth} levels deep",
                param=None if param == "body" else param,
                code="too_deep",
            )


def check_json_value(value: Any, param: str) -> None:
    """Refuse a decoded JSON value holding a string that is not text: a lone surrogate
    (``"\\ud800"``: no UTF-8 for it, so nothing could store or send it) or a NUL.

    Raises:
        APIError: 400 whose ``param`` is the field (``input[0].content``).
    """
    for path, text, is_key in _strings(value, param):
        what = "a key" if is_key else "the value"
        if "\x00" in text:
            problem = "a NUL character"
        elif _SURROGATE.search(text):
            problem = "a lone surrogate (\\ud800-\\udfff), which is not a character"
        else:
            continue
        where = path or "body"
        raise APIError(
            400, f"{where}: {what} holds {problem}", param=path or None, code="invalid_string"
        )


def _strings(value: Any, base: str) -> Iterator[tuple[str, str, bool]]:
    """(path, string, is a key) for each string in ``value``, iteratively (no recursion)."""
    stack: list[tuple[str, Any]] = [(base, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            yield path, item, False
        elif isinstance(item, dict):
            for key, child in item.items():
                yield path, str(key), True
                stack.append((f"{path}.{key}" if path else str(key), child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{index}]", child) for index, child in enumerate(item))
