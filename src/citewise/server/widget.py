"""The embeddable "Ask" widget: ``GET /widget.js`` and the public keys it calls the API with.

A docs page embeds ``<script src="https://citewise.example/widget.js" data-kb="lgos"
data-key="…">``. A widget key (``CITEWISE_WIDGET_KEYS=kb:key,…``) is public (it is in the
page), so it may only answer (``/v1/responses``, ``/v1/chat/completions``), search
(``/v1/knowledge-bases/{kb}/search``) and rate (``/v1/feedback``) its one knowledge base,
from a page of an allowed origin (``CITEWISE_WIDGET_ORIGINS``, never ``*``), within its own
rate limit (``CITEWISE_WIDGET_RATE_LIMIT``, default 20/minute per key and client address).
Anything else sent with it is a 403: uploads, deletes, admin routes, another knowledge
base, another origin.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib.resources import files

from fastapi import APIRouter, Request
from fastapi.responses import Response
from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.types import ASGIApp, Receive, Scope, Send

from citewise.config import environment
from citewise.errors import ConfigurationError
from citewise.server.errors import APIError
from citewise.server.requests import ClientSettings

__all__ = ["WidgetGate", "WidgetKeys", "pinned", "router", "widget_script"]

KEYS_ENV = "CITEWISE_WIDGET_KEYS"
ORIGINS_ENV = "CITEWISE_WIDGET_ORIGINS"
RATE_ENV = "CITEWISE_WIDGET_RATE_LIMIT"
DEFAULT_RATE = "20/minute"
# What a widget key may do: answer, rate, and search its own knowledge base.
_ANSWERS = {("POST", "/v1/responses"), ("POST", "/v1/chat/completions"), ("POST", "/v1/feedback")}
_SEARCH = re.compile(r"^/v1/knowledge-bases/([^/]+)/search$")


@dataclass(frozen=True)
class WidgetKeys:
    """The widget keys (key → its knowledge base), the origins allowed to use them and
    their rate limit."""

    keys: Mapping[str, str] = field(default_factory=dict)
    origins: frozenset[str] = frozenset()
    rate: RateLimitItem = field(default_factory=lambda: parse(DEFAULT_RATE))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WidgetKeys:
        """From ``CITEWISE_WIDGET_KEYS``, ``…_ORIGINS`` and ``…_RATE_LIMIT``.

        Raises:
            ConfigurationError: a key without its knowledge base, keys without origins,
                the origin ``*``, or a rate limit that does not parse.
        """
        env = environment() if environ is None else environ
        keys: dict[str, str] = {}
        for item in env.get(KEYS_ENV, "").split(","):
            if not item.strip():
                continue
            kb, _, key = item.strip().partition(":")
            if not kb or not key:
                raise ConfigurationError(f"{KEYS_ENV} holds KB:KEY pairs, not {item.strip()!r}")
            keys[key] = kb
        origins = frozenset(
            o.strip().rstrip("/") for o in env.get(ORIGINS_ENV, "").split(",") if o.strip()
        )
        if "*" in origins:
            raise ConfigurationError(
                f"{ORIGINS_ENV} may not be '*': name the docs sites that embed the widget"
            )
        if keys and not origins:
            raise ConfigurationError(
                f"{KEYS_ENV} is set but {ORIGINS_ENV} is not: name the origins "
                "(https://docs.example) whose pages may use the widget keys"
            )
        raw = env.get(RATE_ENV, "").strip() or DEFAULT_RATE
        try:
            rate = parse(raw)
        except ValueError:
            raise ConfigurationError(
                f"{RATE_ENV} must look like 20/minute (N per second, minute, hour or day), "
                f"not {raw!r}"
            ) from None
        return cls(keys, origins, rate)


def _forbidden(message: str, code: str = "widget_key_forbidden") -> APIError:
    return APIError(403, message, code=code)


class WidgetGate:
    """Lets a request bearing a widget key through only to what such a key may do, from an
    allowed origin and within its rate limit; marks it (``request.state.widget_kb``) so the
    key checks pass it and the answer is pinned to the key's knowledge base."""

    def __init__(self, app: ASGIApp, widget: WidgetKeys) -> None:
        self.app = app
        self.widget = widget
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        kb = self.widget.keys.get(token.strip()) if scheme.lower() == "bearer" else None
        if kb is None:
            await self.app(scope, receive, send)
            return
        error = self._refusal(scope, headers, kb, token.strip())
        if error is not None:
            await error.response()(scope, receive, send)
            return
        scope.setdefault("state", {})["widget_kb"] = kb
        await self.app(scope, receive, send)

    def _refusal(
        self, scope: Scope, headers: Mapping[bytes, bytes], kb: str, key: str
    ) -> APIError | None:
        origin = headers.get(b"origin", b"").decode("latin-1").rstrip("/")
        if origin not in self.widget.origins:
            shown = repr(origin) if origin else "no Origin"
            return _forbidden(
                f"a widget key is used from the pages of its allowed origins only, not {shown}",
                "origin_not_allowed",
            )
        method, path = scope["method"], scope["path"].rstrip("/")
        search = _SEARCH.match(path)
        if search is not None and method == "POST":
            if search.group(1) != kb:
                return _forbidden(f"this widget key is for knowledge base {kb!r} only")
        elif (method, path) not in _ANSWERS:
            return _forbidden(
                f"a widget key may only answer, search and rate (not {method} {path}): "
                "use an API key"
            )
        who = hashlib.sha256(key.encode()).hexdigest()
        client = scope.get("client")
        who += f":{client[0]}" if client else ""
        if self.limiter.hit(self.widget.rate, who):
            return None
        reset = self.limiter.get_window_stats(self.widget.rate, who).reset_time
        retry = max(1, math.ceil(reset - time.time()))
        return APIError(
            429,
            f"rate limit reached: at most {self.widget.rate} per widget key; retry in {retry}s",
            type="requests",
            code="rate_limit_exceeded",
            headers={"Retry-After": str(retry)},
        )


def pinned(request: Request, client: ClientSettings) -> ClientSettings:
    """``client``'s settings answered from the widget key's knowledge base (unchanged for
    any other key).

    Raises:
        APIError: 403 when the settings name another knowledge base.
    """
    kb = getattr(request.state, "widget_kb", None)
    if kb is None:
        return client
    if client.kb is not None and client.kb != kb:
        raise _forbidden(f"this widget key is for knowledge base {kb!r} only, not {client.kb!r}")
    return replace(client, kb=kb)


# The bundle: the chat page's own libraries and scripts, wrapped so that nothing leaks into
# (or is taken from) the embedding page's globals.
_PARTS = ("render.js", "sse.js", "rating.js", "widget.js")


def widget_script() -> str:
    """``/widget.js``: marked, DOMPurify, the chat page's renderer, SSE reader and rating,
    and the widget, in one function scope."""
    web = files("citewise.server") / "web"

    def read(name: str) -> str:
        return (web / name).read_text(encoding="utf-8")

    return "\n".join([
        "/* citewise widget: marked (MIT) and DOMPurify (Apache-2.0 / MPL-2.0) inside */",
        "(function () {",
        "var module = { exports: {} }; var exports = module.exports;",
        read("marked.umd.js"),
        "var marked = module.exports; module = { exports: {} }; exports = module.exports;",
        read("purify.min.js"),
        "var DOMPurify = module.exports; module = undefined; exports = undefined;",
        *(read(name) for name in _PARTS),
        "})();",
    ])  # fmt: skip


router = APIRouter(include_in_schema=False)


@router.get("/widget.js")
async def widget() -> Response:
    # Public: it holds no key (the page's data-key is the key); a short cache for updates.
    return Response(
        widget_script(),
        media_type="text/javascript",
        headers={"Cache-Control": "public, max-age=300"},
    )
