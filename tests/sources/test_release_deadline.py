"""A release download has a total deadline (not only a per-read timeout), and partial files
never outlive their download, nor a killed run's."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from citewise.errors import DownloadError
from citewise.sources.release import FetchLimits, _Http


class Trickle(BaseHTTPRequestHandler):
    """Sends a 1 MB body one byte every 50 ms: each read is quick, the whole is endless."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        try:
            for _ in range(1_000_000):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def trickle_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/archive.tar.gz"
    server.shutdown()
    server.server_close()


def test_a_trickling_server_hits_the_total_deadline_and_leaves_no_part_file(
    trickle_url: str, tmp_path: Path
) -> None:
    http = _Http(httpx.Client(timeout=5), FetchLimits(timeout=5, total_timeout=1))
    target = tmp_path / "release" / "archive.tar.gz"
    started = time.monotonic()
    with pytest.raises(DownloadError, match=r"took longer than 1 s"):
        http.get(trickle_url, target, max_bytes=10_000_000)
    assert time.monotonic() - started < 4
    assert list(target.parent.iterdir()) == []


def test_a_killed_run_s_stale_part_file_is_removed_a_live_one_kept(tmp_path: Path) -> None:
    target = tmp_path / "archive.tar.gz"
    stale = tmp_path / ".archive.tar.gz.dead.part"
    live = tmp_path / ".archive.tar.gz.live.part"
    stale.write_bytes(b"half")
    live.write_bytes(b"half")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    _Http(None, FetchLimits(timeout=5, total_timeout=60))._remove_stale_parts(target)
    assert not stale.exists() and live.exists()
