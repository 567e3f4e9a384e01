"""Request logs: a request id for every request, one log line per request with its cause when
it failed, and the log format (JSON off a terminal, readable on one).

The middleware here also wires a request to :mod:`citewise.telemetry`: the app's observers
(Prometheus metrics, the diagnostics history, traces) listen to the operations the request
runs, and a failure they report (the chat model's error mid-stream) becomes the request's cause.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from citewise import telemetry
from citewise.config import environment
from citewise.errors import ConfigurationError
from citewise.server.metrics import Metrics

__all__ = [
    "LOG_LEVEL_ENV",
    "REQUEST_ID_HEADER",
    "JSONFormatter",
    "RequestContext",
    "RequestMiddleware",
    "configure_logging",
    "current_request",
    "uvicorn_log_config",
]

LOG_LEVEL_ENV = "CITEWISE_LOG_LEVEL"
REQUEST_ID_HEADER = "X-Request-ID"
_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_ERROR_BODY_BYTES = 16_384  # enough for an error envelope; a large body is not an error's

log = logging.getLogger("citewise.request")
_REQUEST: ContextVar[RequestContext | None] = ContextVar("citewise_request", default=None)


def current_request() -> RequestContext | None:
    """The request being served in this context (None outside one)."""
    return _REQUEST.get()


@dataclass
class RequestContext:
    """What the request log and the metrics learn about one request while it runs."""

    request_id: str
    scope: Scope
    started: float = field(default_factory=time.perf_counter)
    model: str = ""
    cause: str | None = None

    def route(self) -> str:
        """The route's path template (``/v1/models/{model_id}``), so labels stay bounded."""
        path = getattr(self.scope.get("route"), "path", None)
        return path if isinstance(path, str) else "unmatched"

    def elapsed(self) -> float:
        return time.perf_counter() - self.started


class _RequestObserver:
    """The app's telemetry observers, for one request: metrics learn the request's route and
    model, and the first failed operation becomes the request's cause."""

    def __init__(self, request: RequestContext, metrics: Metrics) -> None:
        self.request = request
        self.metrics = metrics

    def observe(self, event: telemetry.Event) -> None:
        self.metrics.observe(event, self.request)
        if event.outcome == "error" and event.kind != telemetry.STAGE:
            if self.request.cause is None:
                self.request.cause = f"{event.name} failed: {event.cause or event.error}"


def request_id(scope: Scope) -> str:
    """The client's ``X-Request-ID`` when it is a safe token, else a new one."""
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id":
            given = bytes(value).decode("latin-1").strip()
            if _SAFE_ID.match(given):
                return given
    return uuid.uuid4().hex


class RequestMiddleware:
    """Per HTTP request: a request id (returned as ``X-Request-ID``), the app's telemetry
    observers and trace span, the request metrics and one log line."""

    def __init__(
        self, app: ASGIApp, metrics: Metrics, observers: Sequence[telemetry.Observer] = ()
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.observers = tuple(observers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        context = RequestContext(request_id(scope), scope)
        status = 500
        error_body = bytearray()
        header = (REQUEST_ID_HEADER.lower().encode(), context.request_id.encode())

        finished = False

        def finish(failure: BaseException | None) -> None:
            nonlocal finished
            if finished:
                return
            finished = True
            if failure is not None:
                context.cause = context.cause or _describe(failure)
            elif status >= 400 and context.cause is None:
                context.cause = _error_message(bytes(error_body))
            self.metrics.finish_request(context, scope["method"], status)
            _log_request(context, scope, status)

        async def wrapped_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message = {**message, "headers": [*message.get("headers", ()), header]}
            elif message["type"] == "http.response.body":
                if status >= 400:
                    room = _ERROR_BODY_BYTES - len(error_body)
                    error_body.extend(message.get("body", b"")[: max(0, room)])
                if not message.get("more_body", False):
                    # Counted and logged before the last byte leaves, so a client that reads
                    # the response (or scrapes /metrics next) finds the request recorded.
                    finish(None)
            await send(message)

        token = _REQUEST.set(context)
        failure: BaseException | None = None
        try:
            with ExitStack() as stack:
                stack.enter_context(
                    telemetry.listening(_RequestObserver(context, self.metrics), *self.observers)
                )
                for observer in self.observers:
                    if telemetry.traces(observer):
                        stack.enter_context(observer.span("request", {"method": scope["method"]}))
                try:
                    await self.app(scope, receive, wrapped_send)
                except BaseException as error:
                    failure = error
                    raise
        finally:
            _REQUEST.reset(token)
            finish(failure)


def _describe(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _error_message(body: bytes) -> str | None:
    """The message of an OpenAI error envelope (what the client was told went wrong)."""
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    error = payload.get("error") if isinstance(payload, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return str(message) if message else None


# Polled by probes and scrapers every few seconds: logged only at debug level when they succeed.
_QUIET_ROUTES = frozenset({"/healthz", "/readyz", "/metrics"})


def _log_request(context: RequestContext, scope: Scope, status: int) -> None:
    failed = status >= 500 or (context.cause is not None and status < 400)
    level = logging.ERROR if failed else logging.WARNING if status >= 400 else logging.INFO
    if level == logging.INFO and context.route() in _QUIET_ROUTES:
        level = logging.DEBUG
    fields: dict[str, Any] = {
        "request_id": context.request_id,
        "method": scope["method"],
        "route": context.route(),
        "path": scope.get("path", ""),
        "status": status,
        "duration_ms": round(context.elapsed() * 1000, 1),
    }
    if context.model:
        fields["model"] = context.model
    if context.cause:
        fields["cause"] = context.cause
    text = f"{fields['method']} {fields['path']} {status} {fields['duration_ms']}ms"
    if context.cause:
        text += f" cause: {context.cause}"
    log.log(level, text, extra={"citewise": fields})


# -- the log format -----------------------------------------------------------------------


class _RequestIdFilter(logging.Filter):
    """Stamps every record logged while serving a request with its request id."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            context = _REQUEST.get()
            fields = getattr(record, "citewise", None)
            if isinstance(fields, dict) and "request_id" in fields:
                record.request_id = fields["request_id"]
            else:
                record.request_id = context.request_id if context is not None else None
        return True


class JSONFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id, the fields."""

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if rid := getattr(record, "request_id", None):
            payload["request_id"] = rid
        fields = getattr(record, "citewise", None)
        if isinstance(fields, dict):
            payload.update(fields)
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return json.dumps(payload, ensure_ascii=False, default=str)


class _ReadableFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        rid = getattr(record, "request_id", None)
        when = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        text = f"{when} {record.levelname:<7} {record.name}"
        text += f" [{rid}] " if rid else " "
        text += record.getMessage()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def configure_logging(
    level: str | None = None, *, stream: IO[str] | None = None, default: str = "INFO"
) -> logging.Handler:
    """Log to ``stream`` (stderr): JSON lines when it is not a terminal, readable lines on
    one, at ``level`` (default ``CITEWISE_LOG_LEVEL``, else ``default``). Returns the handler
    (replacing one an earlier call installed)."""
    name = (level or environment().get(LOG_LEVEL_ENV) or default).upper()
    if name not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ConfigurationError(
            f"{LOG_LEVEL_ENV} must be debug, info, warning, error or critical, not {name!r}"
        )
    stream = stream or sys.stderr
    handler = logging.StreamHandler(stream)
    handler.set_name("citewise")
    isatty = getattr(stream, "isatty", None)
    handler.setFormatter(_ReadableFormatter() if isatty and isatty() else JSONFormatter())
    handler.addFilter(_RequestIdFilter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "citewise"]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(name)
    # The chat model's HTTP client logs every call at info: the request line says enough.
    for chatty in _CHATTY_LOGGERS:
        logging.getLogger(chatty).setLevel(max(logging.WARNING, logging.getLevelName(name)))
    return handler


_CHATTY_LOGGERS = ("httpx", "httpcore", "openai", "urllib3")


def uvicorn_log_config() -> dict[str, Any]:
    """uvicorn's ``log_config``: its loggers keep no handlers of their own and pass their
    lines to the root handler :func:`configure_logging` installed, so they are JSON too."""
    loggers = {name: {"handlers": [], "propagate": True}
               for name in ("uvicorn", "uvicorn.error", "uvicorn.access")}  # fmt: skip
    return {"version": 1, "disable_existing_loggers": False, "loggers": loggers}
