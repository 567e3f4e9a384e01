"""Pooled PostgreSQL connections that are checked before use and given up on in time.

After the database restarts, every idle pooled connection is dead; handed out, each would
fail its request (7 in a row were seen before this module). psycopg_pool's own ``check``
callback finds them, but its loop sleeps 1 s, 2 s, 4 s … between two failed checks, so a
pool holding several stale connections made the first request after the restart wait past
its deadline. Here each connection is checked with the pool's ``check_connection`` and a
dead one is returned at once (the pool discards it and connects a replacement), until a
live one comes or the deadline passes: then :class:`StoreUnavailableError`, never a driver
traceback or a 30 s pool wait.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from time import monotonic
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from citewise.errors import StoreUnavailableError

__all__ = ["checked_connection", "first_line", "unavailable"]

Conn = psycopg.Connection[Any]


def first_line(error: Exception) -> str:
    """The driver's message on one line (libpq adds hint lines: "Is the server running…")."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0].strip()


def unavailable(where: str, error: Exception) -> StoreUnavailableError:
    """The error for a store that cannot be reached, naming the server (never the URL: it
    may hold a password) and the driver's first line."""
    return StoreUnavailableError(
        f"the PostgreSQL store at {where} is unavailable ({first_line(error)}); nothing was "
        "read or written, try again when it is back"
    )


def _get_checked(pool: ConnectionPool[Conn], deadline: float, where: str) -> Conn:
    while True:
        try:
            conn = pool.getconn(timeout=max(deadline - monotonic(), 0.001))
        except psycopg.OperationalError as error:  # PoolTimeout among them
            raise unavailable(where, error) from None
        try:
            ConnectionPool.check_connection(conn)
        except psycopg.Error as error:
            pool.putconn(conn)  # broken: discarded, a replacement is connected in background
            if monotonic() >= deadline:
                raise unavailable(where, error) from None
            continue
        return conn


@contextmanager
def checked_connection(pool: ConnectionPool[Conn], timeout: float, where: str) -> Iterator[Conn]:
    """A live connection of ``pool`` within ``timeout`` seconds; an ``OperationalError`` in
    the block (the server went away mid-request) is a :class:`StoreUnavailableError` too."""
    conn = _get_checked(pool, monotonic() + timeout, where)
    try:
        yield conn
    except psycopg.OperationalError as error:
        raise unavailable(where, error) from None
    finally:
        pool.putconn(conn)
