"""Store availability: the deadline for reaching the store, and which failures mean "not now".

A store that cannot be reached (PostgreSQL stopped or unreachable, a SQLite file locked by
another process or damaged) is a state, not a bug: every engine raises
:class:`~citewise.errors.StoreUnavailableError` within ``CITEWISE_STORE_TIMEOUT`` seconds
(default 3) instead of waiting on a pool for 30 s or leaking a driver traceback, the server
answers ``503 store_unavailable`` with ``Retry-After``, and the next request after the store
is back is served (stale pooled connections are checked and replaced, not handed out).
"""

from __future__ import annotations

import math
import sqlite3

from citewise.config import STORE_TIMEOUT, StoreSettings

__all__ = [
    "STORE_TIMEOUT",
    "connect_timeout",
    "is_sqlite_unavailable",
    "store_timeout",
]


def store_timeout() -> float:
    """Seconds a request may wait for the store (``CITEWISE_STORE_TIMEOUT``, default 3): a
    pooled connection, a reconnect, a connection attempt, a locked SQLite file."""
    return StoreSettings.from_env().timeout


def connect_timeout(seconds: float) -> int:
    """libpq's ``connect_timeout`` (whole seconds, at least 2: libpq's own minimum) for a
    deadline of ``seconds``."""
    return max(2, math.ceil(seconds))


# SQLite's primary result codes for "not now" (locked) and "this file is broken" (damaged).
_LOCKED = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_DAMAGED = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


def is_sqlite_unavailable(error: sqlite3.Error) -> str | None:
    """``"locked"`` or ``"damaged"`` when ``error`` says the file cannot be used now, else
    None (by SQLite's result code when the error carries one, else by its message)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        primary = code & 0xFF
        if primary in _LOCKED:
            return "locked"
        if primary in _DAMAGED:
            return "damaged"
        return None
    text = str(error).lower()
    if "database is locked" in text or "database table is locked" in text:
        return "locked"
    if "malformed" in text or "file is not a database" in text:
        return "damaged"
    return None
