"""A knowledge base written by a newer citewise is refused with a clear error, untouched."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from citewise.errors import KnowledgeBaseError
from citewise.store.sqlite import SQLiteStore


def test_a_newer_schema_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    store.create("kb", {"site_url": "https://example.org/"})
    store.close()
    path = tmp_path / "kb.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = '_schema'")
    before = path.read_bytes()

    again = SQLiteStore(tmp_path)
    with pytest.raises(KnowledgeBaseError, match=r"newer citewise \(schema 99.*upgrade citewise"):
        again.open("kb").meta()
    again.close()
    assert path.read_bytes() == before


def test_the_current_schema_opens(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    store.create("kb", {"site_url": "https://example.org/"})
    assert store.open("kb").meta()["site_url"] == "https://example.org/"
    store.close()
