"""CJK keyword search in SQLite: the bigram index, its queries, and the upgrade of older files.

That CJK queries find CJK chunks is in the contract suite; this file checks how SQLite does it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.store import SQLiteStore
from citewise.store.cjk import cjk_grams, cjk_query
from citewise.store.sqlite import SQLiteKB, fts_query
from citewise.store.sqlite_schema import SCHEMA_VERSION
from tests.store.support import CJK_TEXTS, update


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[SQLiteKB]:
    store = SQLiteStore(tmp_path)
    handle = store.create("kb")
    handle.apply([update(doc, [text]) for doc, text in CJK_TEXTS.items()])
    yield handle
    store.close()


def test_grams_are_overlapping_bigrams_of_cjk_runs_only() -> None:
    assert cjk_grams("向量检索 works，好") == " 向量 量检 检索  works, 好 "
    assert cjk_grams("plain English") == "plain English"


def test_query_quotes_terms_and_prefixes_single_characters() -> None:
    assert cjk_query("删除 the 文档？ 字", frozenset({"the"})) == ('"删除" OR "文档" OR "字"*')


def test_a_single_character_query_matches_the_bigrams_it_starts(kb: SQLiteKB) -> None:
    assert [c.doc_id for c, _ in kb.keyword("晴", 5)] == ["weather"]


def test_english_queries_use_the_original_index_unchanged(kb: SQLiteKB, tmp_path: Path) -> None:
    results = kb.keyword("scheduler cluster jobs", 5)
    conn = sqlite3.connect(tmp_path / "kb.sqlite")
    expected = conn.execute(
        "SELECT -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? "
        "ORDER BY bm25(chunks_fts)",
        (fts_query("scheduler cluster jobs"),),
    ).fetchall()
    conn.close()
    assert [round(s, 9) for _, s in results] == [round(s, 9) for (s,) in expected]
    assert results[0][0].doc_id == "english"


def test_removing_a_document_removes_its_bigrams(kb: SQLiteKB, tmp_path: Path) -> None:
    kb.apply(removed_doc_ids=["delete"])
    assert kb.keyword("删除文档", 5) == []
    conn = sqlite3.connect(tmp_path / "kb.sqlite")
    assert conn.execute("SELECT count(*) FROM chunks_cjk").fetchone()[0] == len(CJK_TEXTS) - 1
    conn.close()


def test_a_version_1_file_gains_the_index_when_opened(kb: SQLiteKB, tmp_path: Path) -> None:
    kb.store.close()
    conn = sqlite3.connect(tmp_path / "kb.sqlite")
    for trigger in ("chunks_cjk_ai", "chunks_cjk_ad", "chunks_cjk_au"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE chunks_cjk")
    conn.execute("UPDATE meta SET value = '1' WHERE key = '_schema'")
    conn.commit()
    conn.close()
    store = SQLiteStore(tmp_path)
    assert [c.doc_id for c, _ in store.open("kb").keyword("删除文档", 5)] == ["delete"]
    check = sqlite3.connect(tmp_path / "kb.sqlite")
    assert check.execute("SELECT value FROM meta WHERE key = '_schema'").fetchone() == (
        SCHEMA_VERSION,
    )
    assert check.execute("SELECT count(*) FROM chunks_cjk").fetchone()[0] == len(CJK_TEXTS)
    check.close()
    store.close()
