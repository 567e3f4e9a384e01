"""Bearer-key auth: ``CITEWISE_API_KEYS`` guards the API, ``CITEWISE_ADMIN_KEYS`` the KB admin API.

Keys come from ``app.state.api_keys`` / ``app.state.admin_keys`` (set by ``create_app``), or
from the environment for an app built without it. With no key configured a route is open,
so a local server needs no setup; health checks are never guarded.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable

from fastapi import Request

from citewise.server.errors import APIError

API_KEYS_ENV = "CITEWISE_API_KEYS"
ADMIN_KEYS_ENV = "CITEWISE_ADMIN_KEYS"

__all__ = [
    "ADMIN_KEYS_ENV",
    "API_KEYS_ENV",
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
        return parse_keys(os.environ.get(env))
    if isinstance(keys, str):  # one comma-separated string, as in the environment
        return parse_keys(keys)
    # Any collection of keys (a tuple must never turn authentication off).
    return frozenset(str(key) for key in keys if str(key).strip())


def _bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _matches(token: str, keys: Iterable[str]) -> bool:
    # Compare with every key, in constant time, so timing tells nothing about a key.
    found = False
    for key in keys:
        found |= hmac.compare_digest(token.encode(), key.encode())
    return found


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

    Raises:
        APIError: 401 in the OpenAI envelope.
    """
    admin = _keys(request, "admin_keys", ADMIN_KEYS_ENV)
    if not admin:
        await require_api_key(request)
        return
    token = _bearer(request)
    if token is None:
        raise _unauthorized("missing admin key: send 'Authorization: Bearer <admin key>'")
    if not _matches(token, admin):
        raise _unauthorized("invalid admin key")
