"""An upload the server cannot spool because its disk is full is the server's fault: a 507
``storage_full``, not FastAPI's ``400 There was an error parsing the body``; nothing is stored
and no temporary file is left. The server runs under ``RLIMIT_FSIZE=0`` (every file write
fails as on a full disk, EFBIG) once it listens."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from tests.reliability.conftest import write_tiny_docs
from tests.server.test_hostile_input import _SERVER


def files(home: Path) -> set[str]:
    """The files under ``home`` (SQLite's -wal and -shm come and go with connections)."""
    return {p.name for p in home.rglob("*") if not p.name.endswith(("-wal", "-shm"))}


def test_an_upload_onto_a_full_disk_is_a_507_leaving_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    KnowledgeBase("t", settings=Settings(home=home)).index_folder(write_tiny_docs(tmp_path))
    spool = tmp_path / "spool"  # the server's TMPDIR: where multipart files go past 1 MiB
    spool.mkdir()
    before = files(home)
    port_file = tmp_path / "port"
    env = {**os.environ, "CITEWISE_API_KEYS": "", "TMPDIR": str(spool)}
    server = subprocess.Popen([sys.executable, "-c", _SERVER, str(home), str(port_file)], env=env)
    try:
        deadline = time.time() + 60
        while not port_file.exists() or not port_file.read_text():
            assert time.time() < deadline and server.poll() is None
            time.sleep(0.05)
        time.sleep(0.2)  # the limit is set just after the port is written
        base = f"http://127.0.0.1:{port_file.read_text()}"
        page = b"# Big\n\n## Part\n\n" + b"Install with pip. " * 100_000  # 1.8 MB: spooled
        response = httpx.post(
            f"{base}/v1/knowledge-bases/t/documents",
            files={"files": ("big.md", page, "text/markdown")},
            timeout=60,
        )
        assert response.status_code == 507, response.text
        error = response.json()["error"]
        assert error["code"] == "storage_full" and "could not write" in error["message"]
        small = httpx.post(
            f"{base}/v1/knowledge-bases/t/documents",
            files={"files": ("small.md", b"# Small\n\n## S\n\nA new page.\n", "text/markdown")},
            timeout=60,
        )
        assert small.status_code == 507, small.text  # the store cannot write either
        assert httpx.get(f"{base}/healthz", timeout=30).status_code == 200
    finally:
        server.kill()
        server.wait()
    assert files(home) <= before  # no temporary file, nothing new
    assert list(spool.iterdir()) == []
    assert {d.doc_id for d in KnowledgeBase("t", settings=Settings(home=home)).documents()} == {
        "guide/a.md",
        "ref/b.md",
    }
