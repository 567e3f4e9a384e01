"""CJK queries score exactly as FTS5's bm25() over a bigram index of every chunk would.

The bigram index holds only the chunks whose bigram form differs from their text; each test
builds, in the same file, the index schema 5 kept (every chunk's bigram form, a private FTS5
table) and compares the store's scores with FTS5's own over it, bit for bit.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from citewise.models import SearchFilter
from citewise.store import SQLiteStore, cjk_bm25
from citewise.store.cjk import cjk_grams, cjk_query
from citewise.store.sqlite import SQLiteKB
from citewise.store.text import STOPWORDS
from tests.store.support import update

_ENGLISH = (
    "cluster scheduler jobs running runs run retries failed vector search index weights "
    "cells cancer therapy treatment café naïve the of and"
).split()
_CJK = "检索向量文档删除细胞癌症治疗天气晴朗ひらがなカタカナ한국어"
_ODD = ["Ｆｕｌｌ", "ｗｉｄｔｈ", "ﬁle", "①", "vector_weight", "T-cell"]


def _text(rng: random.Random) -> str:
    words = []
    for _ in range(rng.randint(1, 40)):
        kind = rng.random()
        if kind < 0.6:
            words.append(rng.choice(_ENGLISH))
        elif kind < 0.9:
            words.append("".join(rng.choice(_CJK) for _ in range(rng.randint(1, 6))))
        else:
            words.append(rng.choice(_ODD))
    return " ".join(words)


def _corpus(seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    docs = {}
    for i in range(150):
        # Most documents plain English (indexed by the word index only), some with CJK.
        texts = [_text(rng) if rng.random() < 0.4 else " ".join(rng.choices(_ENGLISH, k=12))]
        docs[f"d{i}"] = texts + [_text(rng) for _ in range(rng.randint(0, 2))]
    return docs


_QUERIES = [
    "检索",
    "向量检索 cluster",
    "细胞 cancer cells",
    "癌",  # a lone character: a prefix query
    "天气 the jobs running",
    "Ｃａｎｃｅｒ therapy 治疗",
    "ﬁle 文档删除",
    "카타",
    "晴朗 café naïve retries",
    "ひらがな",
    "删 除",
]


def _reference(path: Path, queries: list[str]) -> list[list[tuple[str, float]]]:
    """FTS5's own scores over an index of every chunk's bigram form (schema 5's)."""
    conn = sqlite3.connect(path)
    conn.create_function("citewise_cjk_grams", 1, cjk_grams, deterministic=True)
    conn.execute(
        "CREATE VIRTUAL TABLE temp.every USING fts5(grams, "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute(
        "INSERT INTO temp.every (rowid, grams) SELECT rid, citewise_cjk_grams(text) FROM chunks"
    )
    found = [
        conn.execute(
            "SELECT c.chunk_id, -bm25(every) FROM temp.every JOIN chunks c ON c.rid = every.rowid"
            " WHERE every MATCH ? ORDER BY bm25(every), c.rid",
            (cjk_query(q, STOPWORDS),),
        ).fetchall()
        for q in queries
    ]
    conn.close()
    return found


def _scores(kb: SQLiteKB, k: int = 10_000) -> list[list[tuple[str, float]]]:
    return [[(c.chunk_id, s) for c, s in kb.keyword(q, k)] for q in _QUERIES]


@pytest.fixture
def kb(tmp_path: Path) -> SQLiteKB:
    store = SQLiteStore(tmp_path)
    handle = store.create("kb")
    handle.apply([update(doc, texts) for doc, texts in _corpus(7).items()])
    return handle


def test_scores_equal_ftss_over_every_chunk_bit_for_bit(kb: SQLiteKB, tmp_path: Path) -> None:
    expected = _reference(tmp_path / "kb.sqlite", _QUERIES)
    assert sum(map(bool, expected)) >= 8 and sum(map(len, expected)) > 500
    assert _scores(kb) == expected
    # The top k is the head of the whole ranking (ties by rowid, as FTS5's ORDER BY).
    assert _scores(kb, 7) == [rows[:7] for rows in expected]
    kb.store.close()


def test_scores_stay_exact_through_changes_and_removals(kb: SQLiteKB, tmp_path: Path) -> None:
    corpus = _corpus(8)
    kb.apply(
        [update(doc, texts) for doc, texts in list(corpus.items())[:60]],
        removed_doc_ids=[f"d{i}" for i in range(100, 130)],
    )
    kb.apply([update("d5", ["检索 only now"]), update("d6", ["plain English now"])])
    assert _scores(kb) == _reference(tmp_path / "kb.sqlite", _QUERIES)
    kb.apply(removed_doc_ids=list(_corpus(7)))  # every document with CJK gone
    assert _scores(kb) == _reference(tmp_path / "kb.sqlite", _QUERIES)
    kb.store.close()


def test_a_filter_keeps_the_same_scores(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    kb = store.create("kb")
    updates = [
        update(doc, texts, scope="even" if int(doc[1:]) % 2 == 0 else "odd")
        for doc, texts in _corpus(9).items()
    ]
    kb.apply(updates)
    for query, every in zip(_QUERIES, _reference(tmp_path / "kb.sqlite", _QUERIES), strict=True):
        even = {c.chunk_id for u in updates if u.document.scope == "even" for c in u.chunks}
        found = [(c.chunk_id, s) for c, s in kb.keyword(query, 10_000, SearchFilter("even"))]
        assert found == [(chunk_id, s) for chunk_id, s in every if chunk_id in even]
    store.close()


def test_the_words_from_the_impact_matrix_score_the_same(tmp_path: Path) -> None:
    """With the matrix built (here in the caller), a CJK query's words are read from it
    instead of FTS5: the same scores."""
    store = SQLiteStore(tmp_path, impacts_in_background=False)
    kb = store.create("kb")
    kb.apply([update(doc, texts) for doc, texts in _corpus(11).items()])
    calls = []
    real = cjk_bm25._indexed_matches

    def counted(*args: object) -> object:
        found = real(*args)  # type: ignore[arg-type]
        calls.append(found is not None)
        return found

    cjk_bm25._indexed_matches = counted  # type: ignore[assignment]
    try:
        assert _scores(kb) == _reference(tmp_path / "kb.sqlite", _QUERIES)
    finally:
        cjk_bm25._indexed_matches = real
    assert calls and all(calls)  # every English phrase came from the matrix
    store.close()
