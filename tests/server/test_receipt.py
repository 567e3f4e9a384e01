"""Receipt deadlines under a running ``citewise serve``: 300 connections that never finish
their request head leave ``/healthz`` answering within 1 s and each gets a 408 at the head
deadline; under ``ulimit -n 256`` the connection limit keeps the server reachable; an
upload trickling in below the minimum rate gets a 408."""

from __future__ import annotations

import asyncio
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from citewise.server.receipt import unread_bytes
from tests.cli.test_serve import free_port

HALF_HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
HEADS = 300


@contextmanager
def serve(home: Path, fd_limit: int | None = None, **env: str) -> Iterator[tuple[str, int]]:
    """``citewise serve`` (hashing embedder, no model) with ``env``: (base URL, pid)."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CITEWISE_", "OPENAI"))}

    def limit() -> None:
        if fd_limit is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

    server = subprocess.Popen(
        [sys.executable, "-m", "tests.reliability.hashing_cli", "serve", "--port", str(port),
         "--log-level", "warning"],
        env={**environ, "CITEWISE_HOME": str(home), **env}, preexec_fn=limit,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "no server"
            try:
                if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base, server.pid
    finally:
        server.terminate()
        server.wait(timeout=30)


def half_heads(port: int, count: int) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(HALF_HEAD)
        sockets.append(s)
    return sockets


def answer_of(s: socket.socket, timeout: float) -> bytes:
    """What the server sent before closing (b"" if it only closed)."""
    s.settimeout(timeout)
    data = b""
    try:
        while chunk := s.recv(4096):
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    s.close()
    return data


def healthz_seconds(base: str) -> float:
    started = time.monotonic()
    assert httpx.get(f"{base}/healthz", timeout=10).status_code == 200
    return time.monotonic() - started


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.slow
def test_half_sent_heads_get_408_and_leave_healthz_answering(tmp_path: Path) -> None:
    with serve(tmp_path / "home", CITEWISE_HEADER_TIMEOUT="3") as (base, pid):
        port = int(base.rsplit(":", 1)[1])
        before = open_fds(pid)
        sockets = half_heads(port, HEADS)
        started = time.monotonic()
        took = healthz_seconds(base)
        held = open_fds(pid)
        answers = [answer_of(s, timeout=10) for s in sockets]
        closed_after = time.monotonic() - started
        after = open_fds(pid)
    print(f"{HEADS} half heads: /healthz in {took:.3f} s; server fds {before} → {held} → "
          f"{after}; all answered within {closed_after:.1f} s")  # fmt: skip
    assert took < 1
    assert all(a.startswith(b"HTTP/1.1 408 ") for a in answers), {a[:40] for a in answers}
    assert closed_after < 3 + 5
    assert after <= before + 5


@pytest.mark.slow
def test_the_connection_limit_keeps_a_server_with_256_fds_reachable(tmp_path: Path) -> None:
    # Without the limit (checked on main): accept() fails with EMFILE and /healthz times out.
    with serve(tmp_path / "home", fd_limit=256, CITEWISE_HEADER_TIMEOUT="60") as (base, pid):
        port = int(base.rsplit(":", 1)[1])
        sockets = half_heads(port, HEADS)
        time.sleep(0.5)
        took = healthz_seconds(base)
        assert open_fds(pid) < 256
        shed = [answer_of(s, timeout=0.2) for s in sockets[:50]]
        for s in sockets[50:]:
            s.close()
    print(f"{HEADS} half heads under ulimit -n 256: /healthz in {took:.3f} s")
    assert took < 1
    # The ones waiting longest were closed to make room, with a 408.
    assert sum(a.startswith(b"HTTP/1.1 408 ") for a in shed) >= 40


@pytest.mark.slow
def test_an_upload_trickling_below_the_minimum_rate_gets_408(tmp_path: Path) -> None:
    with serve(tmp_path / "home", CITEWISE_BODY_TIMEOUT="2", CITEWISE_BODY_MIN_RATE="1024") as (
        base,
        _,
    ):
        port = int(base.rsplit(":", 1)[1])
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(
            b"POST /v1/knowledge-bases/x/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: multipart/form-data; boundary=b\r\n"
            b"Content-Length: 10000000\r\n\r\n"
            b'--b\r\nContent-Disposition: form-data; name="files"; filename="a.md"\r\n'
            b"Content-Type: text/markdown\r\n\r\n"
        )
        started = time.monotonic()
        s.settimeout(0.5)
        answer = b""
        while time.monotonic() - started < 10 and not answer:
            try:
                s.sendall(b"x" * 100)
                answer = s.recv(4096)
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
        took = time.monotonic() - started
        answer += answer_of(s, timeout=5)  # the rest of the answer, until the server closes
        assert healthz_seconds(base) < 1
    print(f"100 B every 0.5 s: answered after {took:.1f} s: {answer[:40]!r}")
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"request_timeout" in answer
    assert took < 5


def test_bytes_the_loop_has_not_read_yet_count_as_received() -> None:
    # A connection shed in the burst that opened it is closed before the loop reads what it
    # sent: those bytes are a head begun (a 408), as bytes already read are.
    async def unread() -> list[int]:
        ours, theirs = socket.socketpair()
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_connection(asyncio.Protocol, sock=ours)
        transport.pause_reading()
        seen = [unread_bytes(transport)]
        theirs.sendall(HALF_HEAD)
        await asyncio.sleep(0.05)
        seen.append(unread_bytes(transport))
        transport.close()
        theirs.close()
        await asyncio.sleep(0.05)
        seen.append(unread_bytes(transport))
        return seen

    assert asyncio.run(unread()) == [0, len(HALF_HEAD), 0]
