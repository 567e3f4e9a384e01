"""What only the in-memory engine promises: its BM25 formula and tokens, and a shared store."""

from __future__ import annotations

import math

import pytest

from citewise.store.memory import MemoryStore
from tests.store.support import update

TEXTS = ["proxy proxy setup", "setup guide for the proxy", "unrelated words", "setup"]


def bm25(tf: int, length: int, df: int, n: int, mean: float) -> float:
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / mean))


def test_keyword_scores_are_bm25_with_k1_1_2_and_b_0_75() -> None:
    kb = MemoryStore().create("kb")
    kb.apply([update("d", TEXTS)])
    mean = (3 + 5 + 2 + 1) / 4  # stop words count towards a chunk's length
    expected = {
        TEXTS[0]: bm25(2, 3, 2, 4, mean) + bm25(1, 3, 3, 4, mean),
        TEXTS[1]: bm25(1, 5, 2, 4, mean) + bm25(1, 5, 3, 4, mean),
        TEXTS[3]: bm25(1, 1, 3, 4, mean),
    }
    got = {c.text: s for c, s in kb.keyword("the proxy setups", 10)}
    assert got == pytest.approx(expected)
    assert list(got) == sorted(expected, key=lambda t: -expected[t])


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("queries", "one query"),
        ("key", "API keys"),
        ("status", "status page"),  # "-us" and "-ss" are not plurals
        ("notes", "release note"),
        ("ÉLAN", "elan"),
        ("ｆｕｌｌ", "full width"),
    ],
)
def test_tokens_fold_case_diacritics_width_and_plurals(query: str, text: str) -> None:
    kb = MemoryStore().create("kb")
    kb.apply([update("d", [text, "something else"])])
    assert [c.text for c, _ in kb.keyword(query, 5)] == [text]


def test_closing_keeps_the_data_for_other_openings() -> None:
    store = MemoryStore()
    store.create("kb").apply([update("d", ["kept"])])
    store.close()
    assert [c.text for c, _ in store.open("kb").keyword("kept", 1)] == ["kept"]
