"""Bearer-key auth: ``CITEWISE_API_KEYS`` guards the API, ``CITEWISE_ADMIN_KEYS`` the KB admin API.

Keys come from ``app.state.api_keys`` / ``app.state.admin_keys`` (set by ``create_app``), or
from the environment for an app built without it. With no key configured a route is open,
so a local server needs no setup; health checks are never guarded. A widget key
(``citewise.server.widget``) reaches a route only when the widget gate let it through.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable

from fastapi import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from citewise.config import environment
from citewise.server.errors import APIError

API_KEYS_ENV = "CITEWISE_API_KEYS"
ADMIN_KEYS_ENV = "CITEWISE_ADMIN_KEYS"

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

__all__ = [
    "ADMIN_KEYS_ENV",
    "AuthFirstMiddleware",
    "API_KEYS_ENV",
    "api_keys_of",
    "parse_keys",
    "require_admin_key",
    "require_api_key",
]


def parse_keys(value: str | None) -> frozenset[str]:
    """The keys of a comma-separated list (blanks ignored)."""
    return frozenset(key.strip() for key in (value or "").split(",") if key.strip())


def _keys(request: Request, attribute: str, env: str) -> frozenset[str]:
    keys = getattr(request.app.state, attribute, None)
    if keys is None:  # an app made without options: the environment decides
        return parse_keys(environment().get(env))
    if isinstance(keys, str):  # one comma-separated string, as in the environment
        return parse_keys(keys)
    # Any collection of keys (a tuple must never turn authentication off).
    return frozenset(str(key) for key in keys if str(key).strip())


def api_keys_of(request: Request) -> frozenset[str]:
    """The API keys that guard the app serving ``request`` (empty: the API is open)."""
    return _keys(request, "api_keys", API_KEYS_ENV)


def _bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _matches(token: str, keys: Iterable[str]) -> bool:
    # Compare with every key, in constant time, so timing tells nothing about a key.
    found = False
    for key in keys:
        found |= hmac.compare_digest(token.encode(), key.encode())
    return found


def _widget(request: Request) -> bool:
    """A widget key the widget gate let through to this route."""
    return getattr(request.state, "widget_kb", None) is not None


def _unauthorized(message: str) -> APIError:
    return APIError(
        401,
        message,
        code="invalid_api_key",
        headers={"WWW-Authenticate": 'Bearer realm="citewise"'},
    )


async def require_api_key(request: Request) -> None:
    """Dependency: a valid API key (an admin key also passes) when ``CITEWISE_API_KEYS`` is set.

    Raises:
        APIError: 401 in the OpenAI envelope.
    """
    if _widget(request):
        return
    keys = _keys(request, "api_keys", API_KEYS_ENV)
    if not keys:
        return
    token = _bearer(request)
    if token is None:
        raise _unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    if not _matches(token, keys | _keys(request, "admin_keys", ADMIN_KEYS_ENV)):
        raise _unauthorized("invalid API key")


async def require_admin_key(request: Request) -> None:
    """Dependency: an admin key when ``CITEWISE_ADMIN_KEYS`` is set; otherwise the same rule as
    :func:`require_api_key` (so a server without admin keys is no more open than its API).

    A server run with ``--insecure-no-auth`` and no admin keys keeps the admin API closed.

    Raises:
        APIError: 401 in the OpenAI envelope; 403 for an API key that is not an admin key,
            and on a server whose admin API is closed.
    """
    if _widget(request):
        return  # the widget gate lets a widget key through to its own KB's search only
    admin = _keys(request, "admin_keys", ADMIN_KEYS_ENV)
    if not admin:
        if getattr(request.app.state, "admin_closed", False):
            raise APIError(
                403,
                f"the admin API is closed: this server runs without API keys "
                f"(--insecure-no-auth); set {ADMIN_KEYS_ENV} to open it",
                code="admin_closed",
            )
        await require_api_key(request)
        return
    token = _bearer(request)
    if token is None:
        raise _unauthorized("missing admin key: send 'Authorization: Bearer <admin key>'")
    if not _matches(token, admin):
        if _matches(token, _keys(request, "api_keys", API_KEYS_ENV)):
            # Known, but not for this: a 403, not the 401 of a wrong key.
            raise APIError(
                403, "admin key required: this is an API key, not an admin key",
                code="admin_key_required",
            )  # fmt: skip
        raise _unauthorized("invalid admin key")


class AuthFirstMiddleware:
    """Asks for the key before any body is read: a request with a body to a ``/v1/`` route
    without a valid key (API or admin) is a 401 at once, so an unauthenticated client never
    has its body read, checked or parsed (before, malformed JSON got a 400 first). Which
    key a route needs is still the routes' dependencies' business."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] in _BODY_METHODS
            and scope["path"].startswith("/v1/")
        ):
            request = Request(scope)
            keys = _keys(request, "api_keys", API_KEYS_ENV)
            if keys and not _widget(request):  # a widget key the widget gate let through
                token = _bearer(request)
                known = keys | _keys(request, "admin_keys", ADMIN_KEYS_ENV)
                if token is None or not _matches(token, known):
                    missing = "missing API key: send 'Authorization: Bearer <key>'"
                    error = _unauthorized(missing if token is None else "invalid API key")
                    await error.response()(scope, receive, send)
                    return
        await self.app(scope, receive, send)
