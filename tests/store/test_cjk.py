"""CJK keyword search: the bigram index, its queries, and the upgrade of older files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from citewise.chunking import chunk_sections
from citewise.models import Document, Section
from citewise.store import DocumentUpdate, SQLiteStore
from citewise.store.cjk import cjk_grams, cjk_query
from citewise.store.sqlite import fts_query

TEXTS = {
    "weight": "hybrid 检索中的 vector_weight 控制向量分数与关键词分数的权重。",
    "delete": "删除文档时依靠 file_id 清理残留向量。",
    "parser": "GeneralParsers 负责解析文件，不负责向量检索。",
    "english": "The scheduler runs jobs in the cluster.",
    "weather": "今天天气晴朗，适合出门散步。",
}


def build(root: Path) -> SQLiteStore:
    store = SQLiteStore(root)
    sections = [Section(d, d, (d,), 1, "", d, d, text) for d, text in TEXTS.items()]
    updates = [
        DocumentUpdate(Document(c.doc_id, c.doc_id, "", "", "h"), [c], {c.chunk_id: np.ones(4)})
        for c in chunk_sections(sections)
    ]
    store.apply("kb", updates)
    return store


def test_grams_are_overlapping_bigrams_of_cjk_runs_only() -> None:
    assert cjk_grams("向量检索 works，好") == " 向量 量检 检索  works, 好 "
    assert cjk_grams("plain English") == "plain English"


def test_query_quotes_terms_and_prefixes_single_characters() -> None:
    assert cjk_query("删除 the 文档？ 字", frozenset({"the"})) == ('"删除" OR "文档" OR "字"*')


def test_chinese_queries_find_chinese_chunks(tmp_path: Path) -> None:
    store = build(tmp_path)
    ranked = [c.doc_id for c, _ in store.keyword("kb", "删除文档要依靠哪个字段？", 5)]
    assert ranked[0] == "delete"
    assert "weather" not in ranked
    mixed = [c.doc_id for c, _ in store.keyword("kb", "vector_weight 有什么作用", 5)]
    assert mixed[0] == "weight"
    assert [c.doc_id for c, _ in store.keyword("kb", "天气", 5)] == ["weather"]


def test_english_queries_use_the_original_index_unchanged(tmp_path: Path) -> None:
    store = build(tmp_path)
    results = store.keyword("kb", "scheduler cluster jobs", 5)
    conn = sqlite3.connect(tmp_path / "kb.sqlite")
    expected = conn.execute(
        "SELECT -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? "
        "ORDER BY bm25(chunks_fts)",
        (fts_query("scheduler cluster jobs"),),
    ).fetchall()
    assert [round(s, 9) for _, s in results] == [round(s, 9) for (s,) in expected]
    assert results[0][0].doc_id == "english"


def test_deleting_a_document_removes_its_bigrams(tmp_path: Path) -> None:
    store = build(tmp_path)
    assert store.delete_document("kb", "delete") == 1
    assert store.keyword("kb", "删除文档", 5) == []
    conn = sqlite3.connect(tmp_path / "kb.sqlite")
    assert conn.execute("SELECT count(*) FROM chunks_cjk").fetchone()[0] == len(TEXTS) - 1


def test_a_version_1_file_gains_the_index_when_opened(tmp_path: Path) -> None:
    build(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "kb.sqlite")
    for trigger in ("chunks_cjk_ai", "chunks_cjk_ad", "chunks_cjk_au"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE chunks_cjk")
    conn.execute("UPDATE meta SET value = '1' WHERE key = '_schema'")
    conn.commit()
    conn.close()
    store = SQLiteStore(tmp_path)
    assert [c.doc_id for c, _ in store.keyword("kb", "删除文档", 5)] == ["delete"]
    check = sqlite3.connect(tmp_path / "kb.sqlite")
    assert check.execute("SELECT value FROM meta WHERE key = '_schema'").fetchone() == ("2",)
    assert check.execute("SELECT count(*) FROM chunks_cjk").fetchone()[0] == len(TEXTS)
