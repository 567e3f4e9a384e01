"""Kept-alive connections under a running ``citewise serve`` (issue 35): a connection idle
past the clients' own keep-alive limit (httpx and the ``openai`` client: 5 s) is still open,
so a client reusing it never races the server's close (a ``ReadError``); an idle one is
closed at the keep-alive timeout; and a next request's head still has the head deadline."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from tests.server.test_receipt import answer_of, serve

REQUEST = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
HTTPX_KEEP_ALIVE = 5.0  # httpx.Limits' default keepalive_expiry, the openai client's too


def response_of(s: socket.socket, timeout: float = 10) -> bytes:
    """One whole ``/healthz`` response read from ``s`` (b"" if the server closed)."""
    s.settimeout(timeout)
    data = b""
    while not data.endswith(b'{"status":"ok"}'):
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


@pytest.mark.slow
def test_a_connection_idle_past_the_clients_keep_alive_still_serves(tmp_path: Path) -> None:
    # On main: uvicorn's 5 s keep-alive closed it at 5 s, the very moment an httpx client
    # still counts it alive; here the reuse gets its answer.
    with serve(tmp_path / "home") as (base, _):
        with socket.create_connection(("127.0.0.1", port_of(base))) as s:
            s.sendall(REQUEST)
            assert response_of(s).startswith(b"HTTP/1.1 200 ")
            time.sleep(HTTPX_KEEP_ALIVE + 1)
            s.sendall(REQUEST)
            assert response_of(s).startswith(b"HTTP/1.1 200 ")


@pytest.mark.slow
def test_an_idle_connection_is_closed_at_the_keep_alive_timeout(tmp_path: Path) -> None:
    with serve(tmp_path / "home", CITEWISE_KEEP_ALIVE_TIMEOUT="1") as (base, _):
        s = socket.create_connection(("127.0.0.1", port_of(base)))
        s.sendall(REQUEST)
        assert response_of(s).startswith(b"HTTP/1.1 200 ")
        started = time.monotonic()
        assert answer_of(s, timeout=10) == b""  # closed without a word
        assert time.monotonic() - started < 5


@pytest.mark.slow
def test_a_next_head_sent_in_part_gets_408_at_the_head_deadline(tmp_path: Path) -> None:
    # A long keep-alive gives a slow client no more time for a head once it has begun one.
    env = {"CITEWISE_KEEP_ALIVE_TIMEOUT": "60", "CITEWISE_HEADER_TIMEOUT": "1"}
    with serve(tmp_path / "home", **env) as (base, _):
        s = socket.create_connection(("127.0.0.1", port_of(base)))
        s.sendall(REQUEST)
        assert response_of(s).startswith(b"HTTP/1.1 200 ")
        time.sleep(1.5)  # idle longer than the head deadline: still open
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        started = time.monotonic()
        answer = answer_of(s, timeout=10)
        took = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:60]
    assert took < 5
