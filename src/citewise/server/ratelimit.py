"""Per-key rate limiting of the API (``CITEWISE_RATE_LIMIT``, e.g. ``60/minute``; off unset).

Each known API key (or, without one, each client address) gets its own moving window, counted in
memory by the ``limits`` library: a request past the limit is a 429 in the OpenAI envelope
with ``Retry-After``. Only ``/v1/`` routes count; the page, ``/healthz`` and ``/metrics``
never do, so health checks and scrapes cannot lock a client out.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Mapping

from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.types import ASGIApp, Receive, Scope, Send

from citewise.config import environment
from citewise.errors import ConfigurationError
from citewise.server.errors import APIError

RATE_LIMIT_ENV = "CITEWISE_RATE_LIMIT"

__all__ = ["RATE_LIMIT_ENV", "RateLimitMiddleware", "rate_limit_from_env"]


def rate_limit_from_env(environ: Mapping[str, str] | None = None) -> RateLimitItem | None:
    """The limit ``CITEWISE_RATE_LIMIT`` sets (``N/second|minute|hour|day``), None if unset."""
    value = (environment() if environ is None else environ).get(RATE_LIMIT_ENV, "").strip()
    if not value:
        return None
    try:
        return parse(value)
    except ValueError:
        raise ConfigurationError(
            f"{RATE_LIMIT_ENV} must look like 60/minute (N per second, minute, hour or day), "
            f"not {value!r}"
        ) from None


class RateLimitMiddleware:
    """Answers a 429 to a key over its limit; other requests pass untouched."""

    def __init__(self, app: ASGIApp, limit: RateLimitItem) -> None:
        self.app = app
        self.limit = limit
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        who = _client(scope)
        if self.limiter.hit(self.limit, who):
            await self.app(scope, receive, send)
            return
        reset = self.limiter.get_window_stats(self.limit, who).reset_time
        retry = max(1, math.ceil(reset - time.time()))
        error = APIError(
            429,
            f"rate limit reached: at most {self.limit} per API key; retry in {retry}s",
            type="requests",
            code="rate_limit_exceeded",
            headers={"Retry-After": str(retry)},
        )
        await error.response()(scope, receive, send)


def _client(scope: Scope) -> str:
    """A known API key's digest (never the key itself), else the client's address: made-up
    keys share their sender's window instead of each opening a fresh one."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip() in _known_keys(scope):
                return "key:" + hashlib.sha256(token.strip().encode()).hexdigest()
    client = scope.get("client")
    return f"addr:{client[0]}" if client else "addr:unknown"


def _known_keys(scope: Scope) -> frozenset[str]:
    state = getattr(scope.get("app"), "state", None)
    keys: frozenset[str] = frozenset()
    for attribute in ("api_keys", "admin_keys"):
        found = getattr(state, attribute, None)
        if isinstance(found, frozenset):
            keys |= found
    return keys
