"""CJK keyword search in SQLite: the bigram index, its queries, and the upgrade of older files.

That CJK queries find CJK chunks is in the contract suite; this file checks how SQLite does it.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.store import SQLiteStore
from citewise.store.cjk import _CJK_RUN, _bigrams, cjk_grams, cjk_query
from citewise.store.sqlite import SQLiteKB, fts_query
from citewise.store.sqlite_schema import SCHEMA_VERSION
from citewise.store.text import STOPWORDS
from tests.store.support import CJK_TEXTS, update

# Only these chunks are in the bigram index (their bigram form is not their text).
_CJK_CHUNKS = sum(cjk_grams(text) != text for text in CJK_TEXTS.values())


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


@pytest.mark.parametrize(
    "text",
    [
        "plain ascii",
        "café naïve Ωmega ±5 µm",  # non-ASCII, its own NFKC form, no CJK: returned as is
        "ﬁnancial Ｃａｎｃｅｒ ①",  # non-ASCII that NFKC changes
        "検索 results",
        "〈bracket〉 ～ wave",  # wide but not CJK: punctuation at U+3000-303F, full-width forms
        "\U00020000 extension B",
        "é\u0301 combining",
        "",
    ],
)
def test_grams_quick_checks_give_what_normalizing_gives(text: str) -> None:
    # The reference: NFKC then every CJK run as bigrams, with no shortcut.
    normal = unicodedata.normalize("NFKC", text)
    expected = _CJK_RUN.sub(lambda m: f" {' '.join(_bigrams(m.group()))} ", normal)
    assert cjk_grams(text) == expected


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
    assert conn.execute("SELECT count(*) FROM chunks_cjk").fetchone()[0] == _CJK_CHUNKS - 1
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
    assert check.execute("SELECT count(*) FROM chunks_cjk").fetchone()[0] == _CJK_CHUNKS
    check.close()
    store.close()


# What schema 2-4 files hold: a regular FTS5 table, a second copy of every chunk's bigram form.
_SCHEMA_4 = (
    "CREATE VIRTUAL TABLE chunks_cjk USING fts5("
    "grams, tokenize='porter unicode61 remove_diacritics 2')",
    """CREATE TRIGGER chunks_cjk_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_cjk (rowid, grams) VALUES (new.rid, citewise_cjk_grams(new.text));
END""",
    """CREATE TRIGGER chunks_cjk_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_cjk WHERE rowid = old.rid;
END""",
    """CREATE TRIGGER chunks_cjk_au AFTER UPDATE OF text ON chunks
WHEN old.text IS NOT new.text BEGIN
    UPDATE chunks_cjk SET grams = citewise_cjk_grams(new.text) WHERE rowid = new.rid;
END""",
)
# English, CJK and mixed text, and text NFKC changes (full-width letters, a ligature).
_MIXED = {
    **CJK_TEXTS,
    "fullwidth": "Ｆｕｌｌ width ｓｃｈｅｄｕｌｅｒ and the ﬁle cluster",
    "more": "The cluster scheduler retries failed jobs; 检索 jobs too.",
}
_QUERIES = [
    "删除文档",
    "下雨",
    "vector_weight 有什么作用",
    "scheduler 检索",
    "cluster jobs",
    "file",
]


# What schema 5 files hold: an external-content index of every chunk, over a view.
_INDEXED = "coalesce((SELECT grams FROM chunks_cjk_grams WHERE rid = {0}.rid), {0}.text)"
_FORM = (
    "INSERT INTO chunks_cjk_grams (rid, grams) SELECT new.rid, g FROM "
    "(SELECT citewise_cjk_grams(new.text) AS g) WHERE g IS NOT new.text;"
)
_ADD5 = f"INSERT INTO chunks_cjk (rowid, grams) VALUES (new.rid, {_INDEXED.format('new')});"
_REMOVE5 = (
    "INSERT INTO chunks_cjk (chunks_cjk, rowid, grams) "
    f"VALUES ('delete', old.rid, {_INDEXED.format('old')});"
    "DELETE FROM chunks_cjk_grams WHERE rid = old.rid;"
)
_SCHEMA_5 = (
    "CREATE TABLE chunks_cjk_grams (rid INTEGER PRIMARY KEY, grams TEXT NOT NULL)",
    "CREATE VIEW chunks_cjk_source (rid, grams) AS SELECT c.rid, "
    "coalesce(g.grams, c.text) FROM chunks c LEFT JOIN chunks_cjk_grams g ON g.rid = c.rid",
    "CREATE VIRTUAL TABLE chunks_cjk USING fts5(grams, content='chunks_cjk_source', "
    "content_rowid='rid', tokenize='porter unicode61 remove_diacritics 2')",
    f"CREATE TRIGGER chunks_cjk_ai AFTER INSERT ON chunks BEGIN {_FORM} {_ADD5} END",
    f"CREATE TRIGGER chunks_cjk_ad AFTER DELETE ON chunks BEGIN {_REMOVE5} END",
    "CREATE TRIGGER chunks_cjk_au AFTER UPDATE OF text ON chunks WHEN old.text IS NOT "
    f"new.text BEGIN {_REMOVE5} {_FORM} {_ADD5} END",
)


def _as_schema(path: Path, version: int) -> None:
    """Turn a new file back into what schema 4 or 5 wrote (its bigram index rebuilt so)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("citewise_cjk_grams", 1, cjk_grams, deterministic=True)
    conn.execute("BEGIN")
    for trigger in ("chunks_cjk_ai", "chunks_cjk_ad", "chunks_cjk_au"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE chunks_cjk")
    conn.execute("DROP TABLE chunks_cjk_grams")
    for statement in _SCHEMA_4 if version == 4 else _SCHEMA_5:
        conn.execute(statement)
    if version == 4:
        conn.execute(
            "INSERT INTO chunks_cjk (rowid, grams) SELECT rid, citewise_cjk_grams(text) FROM chunks"
        )
    else:
        conn.execute(
            "INSERT INTO chunks_cjk_grams (rid, grams) SELECT rid, g FROM "
            "(SELECT rid, text, citewise_cjk_grams(text) AS g FROM chunks) WHERE g IS NOT text"
        )
        conn.execute("INSERT INTO chunks_cjk (chunks_cjk) VALUES ('rebuild')")
    conn.execute(f"UPDATE meta SET value = '{version}' WHERE key = '_schema'")
    conn.execute("COMMIT")
    conn.close()


# An older file's own scores: FTS5's bm25() over its index of every chunk.
_SCORES = (
    "SELECT c.chunk_id, -bm25(chunks_cjk) FROM chunks_cjk JOIN chunks c ON c.rid = "
    "chunks_cjk.rowid WHERE chunks_cjk MATCH ? ORDER BY bm25(chunks_cjk), c.rid"
)
_RAW_QUERIES = ("删除文档 晴", "检索 scheduler cluster", "ｆｉｌｅ 检索", "天 the jobs")


def _integrity(path: Path) -> None:
    conn = sqlite3.connect(path)
    # rank 1: the index is also checked against the text it was made from (its content).
    conn.execute("INSERT INTO chunks_cjk (chunks_cjk, rank) VALUES ('integrity-check', 1)")
    conn.close()


def _results(kb: SQLiteKB) -> list[list[tuple[str, float]]]:
    return [[(c.chunk_id, s) for c, s in kb.keyword(q, 10)] for q in _QUERIES]


def test_only_text_whose_bigram_form_differs_is_indexed(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    kb = store.create("kb")
    kb.apply([update(doc, [text]) for doc, text in _MIXED.items()])
    conn = sqlite3.connect(tmp_path / "kb.sqlite")
    stored = dict(
        conn.execute("SELECT c.doc_id, g.grams FROM chunks_cjk_grams g JOIN chunks c USING (rid)")
    )
    indexed = conn.execute("SELECT count(*) FROM chunks_cjk").fetchone()[0]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert stored == {d: cjk_grams(t) for d, t in _MIXED.items() if d != "english"}
    assert indexed == len(stored)
    assert not {"chunks_cjk_content", "chunks_cjk_source"} & tables
    _integrity(tmp_path / "kb.sqlite")
    store.close()


@pytest.mark.parametrize("version", [4, 5])
def test_an_older_file_is_converted_with_the_same_scores(tmp_path: Path, version: int) -> None:
    store = SQLiteStore(tmp_path)
    kb = store.create("kb")
    kb.apply([update(doc, [text]) for doc, text in _MIXED.items()])
    kb.apply(removed_doc_ids=["delete"])  # rowids with a gap, as a used file has
    store.close()
    path = tmp_path / "kb.sqlite"
    _as_schema(path, version)
    old = SQLiteStore(tmp_path)
    raw = sqlite3.connect(path)
    raw.create_function("citewise_cjk_grams", 1, cjk_grams, deterministic=True)
    # The older file's own scores, read before any citewise opens it.
    before = [raw.execute(_SCORES, (cjk_query(q, STOPWORDS),)).fetchall() for q in _RAW_QUERIES]
    chunks_before = raw.execute("SELECT * FROM chunks ORDER BY rid").fetchall()
    raw.close()
    handle = old.open("kb")  # opening converts
    after = [[(c.chunk_id, s) for c, s in handle.keyword(q, 100)] for q in _RAW_QUERIES]
    assert after == before and all(before)  # the same rows, the same scores, bit for bit
    check = sqlite3.connect(path)
    assert check.execute("SELECT * FROM chunks ORDER BY rid").fetchall() == chunks_before
    assert check.execute("SELECT value FROM meta WHERE key = '_schema'").fetchone() == (
        SCHEMA_VERSION,
    )
    names = {row[0] for row in check.execute("SELECT name FROM sqlite_master")}
    assert not {"chunks_cjk_content", "chunks_cjk_source"} & names
    assert "chunks_cjk_grams" in names
    check.close()
    _integrity(path)
    old.close()


@pytest.mark.parametrize("version", [4, 5])
def test_a_converted_file_ranks_as_a_new_one_through_writes(tmp_path: Path, version: int) -> None:
    """The same writes to a new file and to a converted older one: same hits and scores."""
    results = {}
    for form in ("new", "old"):
        root = tmp_path / form
        store = SQLiteStore(root)
        kb = store.create("kb")
        kb.apply([update(doc, [text]) for doc, text in list(_MIXED.items())[:3]])
        if form == "old":
            store.close()
            _as_schema(root / "kb.sqlite", version)
            store = SQLiteStore(root)
            kb = store.open("kb")  # converted here
        kb.apply([update(doc, [text]) for doc, text in list(_MIXED.items())[3:]])
        # Changed text (the update trigger), a removed document and a re-added one.
        kb.apply([update("weather", ["明天下雨，带伞。 The cluster is down."])], ["parser"])
        kb.apply([update("parser", ["GeneralParsers 负责解析文件。"])])
        results[form] = _results(kb)
        _integrity(root / "kb.sqlite")
        store.close()
    assert results["new"] == results["old"]
    assert all(results["new"])
