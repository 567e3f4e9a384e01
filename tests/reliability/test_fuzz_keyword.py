"""Fuzzed keyword queries: free text never reaches SQLite's FTS5 parser as syntax."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citewise.store.sqlite import SQLiteKB, SQLiteStore
from citewise.store.sqlite_schema import fts_query
from citewise.store.text import MAX_TERMS, query_terms

FUZZ = settings(max_examples=200, deadline=1000, database=None)
# FTS5 query syntax and tokenizer edge cases among the free text.
SYNTAX = st.sampled_from(
    [
        '"', "'", "*", "^", "(", ")", ":", "-", "+", "AND", "OR", "NOT", "NEAR", "NEAR(",
        "col:", "{", "}", " ", "\x00", "\u200b", "ＡＢＣ", "日本語の説明", "한국어", "_", "🎉",
        "install", "the", "a",
    ]
)  # fmt: skip
QUERIES = st.lists(st.one_of(SYNTAX, st.text(max_size=15)), max_size=30).map(" ".join)


@pytest.fixture(scope="module")
def kb(tiny_home: Path) -> Iterator[SQLiteKB]:
    store = SQLiteStore(tiny_home / "kb")
    yield store.open("t")


@FUZZ
@given(text=QUERIES)
def test_query_terms_are_plain_words(text: str) -> None:
    terms = query_terms(text)
    assert len(terms) <= MAX_TERMS and len(set(terms)) == len(terms)
    assert all(term and '"' not in term and term == term.lower() for term in terms)
    match = fts_query(text)
    assert match == " OR ".join(f'"{term}"' for term in terms)


@FUZZ
@given(text=QUERIES)
def test_any_text_is_a_safe_keyword_search(kb: SQLiteKB, text: str) -> None:
    hits = kb.keyword(text, 5)
    assert len(hits) <= 5
    assert all(score > 0 for _, score in hits) or not hits


def test_a_real_word_is_found(kb: SQLiteKB) -> None:
    assert [chunk.doc_id for chunk, _ in kb.keyword('install" OR NOT (', 5)] == ["guide/a.md"]
