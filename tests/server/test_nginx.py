"""The nginx block of docs/deploy.md, run as written (plain HTTP instead of TLS) in front of a
real ``citewise serve``: uploads past nginx's 1 MiB default reach citewise, streams pass,
and half-sent heads are closed at the documented header timeout while /healthz answers.
Skipped when nginx is not installed (CI installs it)."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli.test_serve import free_port
from tests.server.test_receipt import HALF_HEAD, answer_of, serve

DEPLOY = Path(__file__).parents[2] / "docs" / "deploy.md"


def documented_block() -> str:
    """The ``server { … }`` block of the page's nginx example."""
    found = re.search(r"```nginx\n(server \{.*?\n\})\n```", DEPLOY.read_text(), re.DOTALL)
    assert found, "docs/deploy.md has no nginx server block"
    return found.group(1)


def local_block(upstream: int, port: int) -> str:
    """The documented block, on plain HTTP at 127.0.0.1:``port`` in front of ``upstream``."""
    block = documented_block()
    block = re.sub(r"listen 443 ssl;", f"listen 127.0.0.1:{port};", block)
    block = re.sub(r"\n\s*ssl_certificate(_key)?\s[^\n]*", "", block)
    assert "proxy_pass http://127.0.0.1:8000;" in block
    return block.replace("127.0.0.1:8000", f"127.0.0.1:{upstream}")


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[str]:
    nginx = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if nginx is None:
        pytest.skip("nginx is not installed")
    with serve(tmp_path / "home") as (base, _):
        upstream = int(base.rsplit(":", 1)[1])
        port = free_port()
        root = tmp_path / "nginx"
        root.mkdir()
        conf = root / "nginx.conf"
        conf.write_text(
            f"daemon off;\nmaster_process off;\npid {root}/nginx.pid;\n"
            f"error_log {root}/error.log warn;\nevents {{ worker_connections 1024; }}\n"
            f"http {{\n access_log off;\n client_body_temp_path {root}/body;\n"
            f" proxy_temp_path {root}/proxy;\n"
            f"{local_block(upstream, port)}\n}}\n"
        )
        proxy = subprocess.Popen([nginx, "-p", str(root), "-c", str(conf)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(100):
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    assert proxy.poll() is None, (root / "error.log").read_text()
                    time.sleep(0.1)
            yield url
        finally:
            proxy.terminate()
            proxy.wait(timeout=30)


@pytest.mark.slow
def test_the_documented_nginx_block_passes_uploads_and_bounds_slow_heads(proxied: str) -> None:
    # 3 MB: over nginx's 1 MiB default, under citewise's upload limit. citewise answers it
    # (the knowledge base does not exist: its own 404 envelope, not nginx's HTML 413).
    page = b"# Big\n\n" + b"Install with pip. " * 170_000
    response = httpx.post(
        f"{proxied}/v1/knowledge-bases/nope/documents",
        files={"files": ("big.md", page, "text/markdown")},
        timeout=60,
    )
    assert response.status_code != 413, response.text[:200]
    assert response.json()["error"]["code"] == "not_found"

    port = int(proxied.rsplit(":", 1)[1])
    sockets = []
    for _ in range(100):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(HALF_HEAD)
        sockets.append(s)
    started = time.monotonic()
    assert httpx.get(f"{proxied}/healthz", timeout=5).status_code == 200
    assert time.monotonic() - started < 1
    documented = re.search(r"client_header_timeout (\d+)s", documented_block())
    assert documented, "the block sets no client_header_timeout"
    timeout = float(documented.group(1))
    answers = [answer_of(s, timeout=timeout + 5) for s in sockets]
    took = time.monotonic() - started
    # nginx closes them at the header timeout (with a 408 or without an answer).
    assert all(a == b"" or a.startswith(b"HTTP/1.1 408") for a in answers), answers[0][:80]
    assert took < timeout + 5
