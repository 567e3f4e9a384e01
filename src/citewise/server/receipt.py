"""Receipt deadlines: a client must send its request in time, and may hold only so many
connections, so slow or half-open clients cannot exhaust the server.

Measured before: 300 connections that never finished their headers stayed open ≥ 75 s
(uvicorn's keep-alive timeout is cancelled by any byte), and under ``ulimit -n 256`` they
made ``/healthz`` unreachable. Now:

- a request head must be complete within ``CITEWISE_HEADER_TIMEOUT`` seconds (default 10)
  of the connection opening, or of the first byte of a next request on a kept-alive
  connection, else ``408`` and the connection is closed (one that sent nothing is just
  closed);
- between requests, a kept-alive connection may stay idle ``CITEWISE_KEEP_ALIVE_TIMEOUT``
  seconds (default 75, nginx's), then it is closed. It must outlast the clients' own idle
  limit (httpx and the ``openai`` client: 5 s; aiohttp: 15 s): closing first races a client
  that has just sent its next request on the connection, which then fails with a
  ``ReadError`` (connection reset) or "server disconnected". uvicorn's own keep-alive
  timeout was 5 s, the same as httpx's: under load (issue 35: 6 of 150 streams at load
  average 18) the server's timer ran late, after a client had reused the connection;
- at most ``CITEWISE_MAX_CONNECTIONS`` connections are open (default 1000, and never more
  than ¾ of the process's file-descriptor limit): past it, the connection waiting longest
  for its head is closed (408), or the new one if none is waiting (503);
- a request body must arrive within ``CITEWISE_BODY_TIMEOUT`` seconds (default 15) plus one
  second per ``CITEWISE_BODY_MIN_RATE`` bytes (default 1024), with no gap longer than the
  body timeout, else ``408`` (enforced by ``BodyLimitMiddleware`` in
  ``citewise.server.limits``, the one middleware that guards request bodies).

The head deadline and the connection limit live in :class:`ReceiptProtocol`, uvicorn's h11
protocol with these checks (``citewise serve`` runs it); behind a front proxy, the proxy's
timeouts do the same (docs/deploy.md).
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import math
import resource
import struct
import termios
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from citewise.config import environment, positive_number

__all__ = ["ReceiptDeadlines", "ReceiptProtocol", "protocol_class", "uvicorn_options"]

HEADER_TIMEOUT = 10.0
KEEP_ALIVE_TIMEOUT = 75.0
BODY_TIMEOUT = 15.0
BODY_MIN_RATE = 1024
MAX_CONNECTIONS = 1000


@dataclass(frozen=True)
class ReceiptDeadlines:
    """How long a client may take to send a request, and how many connections it may hold."""

    header_timeout: float = HEADER_TIMEOUT
    keep_alive_timeout: float = KEEP_ALIVE_TIMEOUT
    body_timeout: float = BODY_TIMEOUT
    body_min_rate: int = BODY_MIN_RATE
    max_connections: int = MAX_CONNECTIONS

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ReceiptDeadlines:
        env = environment() if environ is None else environ
        wanted = int(positive_number(env, "CITEWISE_MAX_CONNECTIONS", MAX_CONNECTIONS))
        return cls(
            header_timeout=positive_number(env, "CITEWISE_HEADER_TIMEOUT", HEADER_TIMEOUT),
            keep_alive_timeout=positive_number(
                env, "CITEWISE_KEEP_ALIVE_TIMEOUT", KEEP_ALIVE_TIMEOUT
            ),
            body_timeout=positive_number(env, "CITEWISE_BODY_TIMEOUT", BODY_TIMEOUT),
            body_min_rate=int(positive_number(env, "CITEWISE_BODY_MIN_RATE", BODY_MIN_RATE)),
            max_connections=min(wanted, _fd_bound()),
        )

    def body_wait(self, seen: int, elapsed: float) -> float:
        """How long to wait for the next piece of a body of which ``seen`` bytes came in
        ``elapsed`` seconds (≤ 0: too late already)."""
        allowed = self.body_timeout + seen / self.body_min_rate
        return min(self.body_timeout, allowed - elapsed)


def _fd_bound() -> int:
    """¾ of the soft file-descriptor limit: the rest is for the store, models and logs."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MAX_CONNECTIONS if soft == resource.RLIM_INFINITY else max(8, soft * 3 // 4)


def _raw_error(status: int, reason: str, message: str, code: str) -> bytes:
    body = json.dumps(
        {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": None,
                "code": code,
            }
        }  # fmt: skip
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body


_HEAD_TIMEOUT = _raw_error(
    408, "Request Timeout", "the request head did not arrive in time", "request_timeout"
)
_BUSY = _raw_error(
    503, "Service Unavailable", "too many open connections: try again", "too_many_connections"
)


class ReceiptProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head and a connection limit.

    A connection is "waiting for a head" from when it opens, and again from each complete
    response, until h11 has parsed the next request line and headers. A new connection has
    the head deadline from the start; a kept-alive one may idle for the keep-alive timeout,
    and has the head deadline from the first byte of its next request.
    """

    deadlines: ClassVar[ReceiptDeadlines] = ReceiptDeadlines()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self.waiting_since: float | None = None
        self._idle = False  # between requests, no byte of the next one yet

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()
        if len(self.connections) > self.deadlines.max_connections:
            self._shed()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_received()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.waiting_since is None:
            return
        if self.conn.their_state is not h11.IDLE:
            self._head_received()
        elif self._idle and data:
            # A next request has begun: from now on its head has the head deadline.
            self._await_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._await_head(idle=not self.conn.trailing_data[0])

    def _await_head(self, *, idle: bool = False) -> None:
        self._head_received()
        self.waiting_since = self.loop.time()
        self._idle = idle
        wait = self.deadlines.keep_alive_timeout if idle else self.deadlines.header_timeout
        self._head_timer = self.loop.call_later(wait, self._too_late)

    def _head_received(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = None
        self.waiting_since = None
        self._idle = False

    def _too_late(self) -> None:
        """The head deadline passed: 408 if part of a head came, then close."""
        self._head_timer = None
        self._close_waiting()

    def _head_begun(self) -> bool:
        """Whether part of a request head came: read already, or still unread in the
        socket (a connection shed in the burst of connections that opened it is closed
        before the loop has read what it sent)."""
        return bool(self.conn.trailing_data[0]) or unread_bytes(self.transport) > 0

    def _shed(self) -> None:
        """Over the connection limit: close the connection waiting longest for its head
        (itself if it is the only one waiting), else refuse this new one with a 503."""
        waiting = [
            c
            for c in self.connections
            if isinstance(c, ReceiptProtocol) and c.waiting_since is not None and c is not self
        ]
        if waiting:
            oldest = min(waiting, key=lambda c: c.waiting_since or 0.0)
            oldest._head_received()
            oldest._close_waiting()
            return
        self._head_received()
        self.transport.write(_BUSY)
        self.transport.close()

    def _close_waiting(self) -> None:
        if not self.transport.is_closing():
            if self._head_begun():
                self.transport.write(_HEAD_TIMEOUT)
            self.transport.close()


def unread_bytes(transport: asyncio.BaseTransport) -> int:
    """How many received bytes of ``transport``'s socket the loop has not read yet (0 when
    that cannot be told)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    try:
        answer = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except (OSError, ValueError):  # closed meanwhile, or not a stream socket
        return 0
    return int(struct.unpack("i", answer)[0])


def protocol_class(deadlines: ReceiptDeadlines | None = None) -> type[ReceiptProtocol]:
    """A :class:`ReceiptProtocol` class bound to ``deadlines`` (default: the environment's),
    to pass as uvicorn's ``http``."""
    bound = deadlines or ReceiptDeadlines.from_env()
    return type("BoundReceiptProtocol", (ReceiptProtocol,), {"deadlines": bound})


def uvicorn_options(deadlines: ReceiptDeadlines | None = None) -> dict[str, Any]:
    """What ``citewise serve`` gives ``uvicorn.run`` (the load check and its tests too): the
    receipt protocol, and uvicorn's own keep-alive timeout past the protocol's, so the idle
    limit that closes a connection is the one :class:`ReceiptProtocol` keeps."""
    bound = deadlines or ReceiptDeadlines.from_env()
    return {
        "http": protocol_class(bound),
        # uvicorn takes whole seconds; one more, so its timer never fires first.
        "timeout_keep_alive": math.ceil(bound.keep_alive_timeout) + 1,
    }
