"""A SQLite knowledge base that is locked by another process or damaged is a 503
``store_unavailable`` through the server within ``CITEWISE_STORE_TIMEOUT`` (was: a 30 s wait,
or a 500 for a damaged file), and a one-line ``StoreUnavailableError`` in the library."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from citewise.config import Settings
from citewise.embedding.base import register_embedder
from citewise.errors import StoreUnavailableError
from citewise.kb import KnowledgeBase
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from tests.reliability.conftest import write_tiny_docs
from tests.reliability.hashing_cli import HashingEmbedder

SEARCH = {"query": "install with pip"}


def indexed_home(tmp_path: Path) -> Path:
    register_embedder("hashing", HashingEmbedder)
    home = tmp_path / "home"
    settings = Settings(home=home, embedder="hashing")
    KnowledgeBase("x", settings=settings).index_folder(write_tiny_docs(tmp_path))
    return home


def serve(home: Path) -> object:
    settings = Settings(home=home, embedder="hashing")
    return create_app(settings, ServerOptions(kb="x"), model_factory=lambda: None)


def test_a_locked_knowledge_base_is_503_within_the_store_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWISE_STORE_TIMEOUT", "1")
    home = indexed_home(tmp_path)
    # Another process's exclusive lock (taken while nobody else has the file open): no
    # reader gets in until it ends.
    holder = sqlite3.connect(home / "kb" / "x.sqlite", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    with running(serve(home)) as url, httpx.Client(base_url=url, timeout=30) as client:
        started = time.monotonic()
        locked = client.post("/v1/knowledge-bases/x/search", json=SEARCH)
        took = time.monotonic() - started
        assert locked.status_code == 503, locked.text
        assert locked.json()["error"]["code"] == "store_unavailable"
        assert "locked by another process" in locked.json()["error"]["message"]
        assert locked.headers["retry-after"].isdigit()
        assert took < 3, took
        holder.execute("COMMIT")
        holder.close()  # the exclusive lock ends with the connection
        assert client.post("/v1/knowledge-bases/x/search", json=SEARCH).status_code == 200


def test_a_damaged_knowledge_base_is_503_naming_the_repair(tmp_path: Path) -> None:
    home = indexed_home(tmp_path)
    path = (home / "kb" / "x.sqlite").resolve()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with path.open("r+b") as handle:
        handle.write(b"\x00garbage" * 16)  # the header: no longer a SQLite file
    with pytest.raises(StoreUnavailableError, match="'x' is damaged .*--rebuild") as caught:
        KnowledgeBase("x", settings=Settings(home=home, embedder="hashing")).search("pip")
    assert "\n" not in str(caught.value)
    with running(serve(home)) as url, httpx.Client(base_url=url, timeout=30) as client:
        damaged = client.post("/v1/knowledge-bases/x/search", json=SEARCH)
        assert damaged.status_code == 503, damaged.text
        assert damaged.json()["error"]["code"] == "store_unavailable"
