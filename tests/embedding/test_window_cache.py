"""The window cache: cuts read back from the embedding cache's file are the windows cut fresh."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from citewise.embedding import CachedEmbedder, Embedder, EmbeddingCache
from citewise.embedding.base import Vectors
from citewise.embedding.window_cache import decode, encode
from citewise.embedding.windows import windows_for, windows_for_many
from tests.conftest import SHARED_DATA

HEADING = "Run The Server > Settings"


class Counting:
    """MiniLM's own tokenizer and window size, counting the texts it tokenizes to cut."""

    def __init__(self, inner: Embedder, model_id: str = "minilm-l6-int8") -> None:
        self.inner = inner
        self.model_id = model_id
        self.dim = inner.dim
        self.window_chars = inner.window_chars
        self.window_tokens: int = getattr(inner, "window_tokens")  # noqa: B009
        self.tokenizer_id: str = getattr(inner, "tokenizer_id")  # noqa: B009
        self.tokenized: list[str] = []

    def token_spans(self, text: str) -> Sequence[tuple[int, int]]:
        self.tokenized.append(text)
        return getattr(self.inner, "token_spans")(text)  # type: ignore[no-any-return]  # noqa: B009

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return np.zeros((len(texts), self.dim), dtype=np.float32)

    def embed_query(self, text: str) -> Vectors:
        return np.zeros(self.dim, dtype=np.float32)


def texts() -> list[str]:
    """Chunk texts that fit, that need several windows, with and without a heading line,
    with a heading whose line ends in spaces, with CJK and accents."""
    body = "\n\n".join(
        " ".join(f"Paragraph {p} sentence {s} explains a setting." for s in range(9))
        for p in range(7)
    )
    found = [
        f"{HEADING}\n\nShort body.",
        f"{HEADING}\n\n{body}",
        f"{HEADING}   \n\n{body}  ",
        body,
        f"配置 > 服务器\n\n{'向量检索的权重控制关键词分数。' * 40}",
        f"Café > Naïve\n\n{'Über-long façade déjà vu, ' * 120}",
        "x" * 3000,
    ]
    scifact = SHARED_DATA / "scifact" / "corpus.jsonl"
    if scifact.is_file():
        with scifact.open() as lines:
            for _, line in zip(range(300), lines, strict=False):
                doc = json.loads(line)
                found.append(f"{doc['title']}\n\n{doc['text']}")
    return found


@pytest.fixture
def cache_file(tmp_path: Path) -> Path:
    return tmp_path / "home" / "embedding-cache.sqlite"


def cut(inner: Counting, path: Path, items: list[str]) -> list[list[str]]:
    with EmbeddingCache(path) as cache:
        return windows_for_many(CachedEmbedder(inner, cache), items)


def test_cached_windows_are_the_windows_cut_fresh(minilm: Embedder, cache_file: Path) -> None:
    items = texts()
    fresh = [windows_for(minilm, text) for text in items]
    assert any(len(w) > 1 for w in fresh) and any(len(w) == 1 for w in fresh)
    first = Counting(minilm)
    assert cut(first, cache_file, items) == fresh
    assert first.tokenized == items
    # Another cache over the same file (as another process, or a second knowledge base):
    # the same windows, and no text tokenized again.
    again = Counting(minilm)
    assert cut(again, cache_file, items) == fresh
    assert again.tokenized == []


def test_a_change_to_what_windows_depend_on_misses(minilm: Embedder, cache_file: Path) -> None:
    items = texts()[:3]
    cut(Counting(minilm), cache_file, items)
    other_model = Counting(minilm, model_id="another-model")
    assert cut(other_model, cache_file, items) == [windows_for(minilm, t) for t in items]
    assert other_model.tokenized == items
    other_tokenizer = Counting(minilm)
    other_tokenizer.tokenizer_id = "another vocabulary"
    cut(other_tokenizer, cache_file, items)
    assert other_tokenizer.tokenized == items
    smaller = Counting(minilm)
    smaller.window_tokens = 64
    expected = [windows_for(smaller, t) for t in items]
    smaller.tokenized.clear()
    assert cut(smaller, cache_file, items) == expected
    assert smaller.tokenized == items


def test_a_damaged_row_is_cut_again_and_replaced(minilm: Embedder, cache_file: Path) -> None:
    items = texts()[:3]
    fresh = [windows_for(minilm, t) for t in items]
    cut(Counting(minilm), cache_file, items)
    with sqlite3.connect(cache_file) as conn:
        keys = [row[0] for row in conn.execute("SELECT key FROM windows ORDER BY id")]
        conn.execute("UPDATE windows SET cut = ? WHERE key = ?", (b"\x01\x02\x03", keys[0]))
        # Spans beyond the text: a row written for another text under the same key.
        far = np.array([0, 0, 0, 10**6], dtype=np.int32).tobytes()
        conn.execute("UPDATE windows SET cut = ? WHERE key = ?", (far, keys[1]))
    conn.close()
    again = Counting(minilm)
    assert cut(again, cache_file, items) == fresh
    assert again.tokenized == items[:2]
    third = Counting(minilm)
    assert cut(third, cache_file, items) == fresh
    assert third.tokenized == []  # the damaged rows were replaced


def test_the_table_keeps_the_newest_cuts_only(minilm: Embedder, cache_file: Path) -> None:
    items = [f"{HEADING}\n\nBody number {i}." for i in range(10)]
    with EmbeddingCache(cache_file) as cache:
        cache.windows.max_rows = 4
        embedder = CachedEmbedder(Counting(minilm), cache)
        for item in items:
            windows_for_many(embedder, [item])
        assert cache.windows.count() == 4
    newest = Counting(minilm)
    cut(newest, cache_file, items)
    assert newest.tokenized == items[:6]


def test_an_unreadable_cache_still_cuts(minilm: Embedder, cache_file: Path) -> None:
    items = texts()[:2]
    with EmbeddingCache(cache_file) as cache:
        with sqlite3.connect(cache_file) as conn:
            conn.execute("DROP TABLE windows")
        conn.close()
        counting = Counting(minilm)
        assert windows_for_many(CachedEmbedder(counting, cache), items) == [
            windows_for(minilm, t) for t in items
        ]
        assert counting.tokenized == items


def test_character_windows_are_not_cached(cache_file: Path) -> None:
    class Chars:
        model_id, dim, window_chars = "chars", 4, 50

        def embed_documents(self, texts: Sequence[str]) -> Vectors:
            return np.zeros((len(texts), 4), dtype=np.float32)

        def embed_query(self, text: str) -> Vectors:
            return np.zeros(4, dtype=np.float32)

    text = f"{HEADING}\n\n" + "A sentence of the body. " * 20
    with EmbeddingCache(cache_file) as cache:
        assert windows_for_many(CachedEmbedder(Chars(), cache), [text]) == [
            windows_for(Chars(), text)
        ]
        assert cache.windows.count() == 0


def test_windows_not_made_of_the_text_are_not_encoded() -> None:
    text = f"{HEADING}\n\nBody text here."
    assert encode(text, ["something else"]) is None
    blob = encode(text, [f"{HEADING}\n\nBody", "text here."])
    assert blob is not None and decode(text, blob) == [f"{HEADING}\n\nBody", "text here."]
    assert decode(text, b"") is None and decode(text, b"\x00" * 15) is None


def test_a_second_knowledge_base_over_the_same_text_tokenizes_nothing(
    minilm: Embedder, tmp_path: Path
) -> None:
    from citewise.config import Settings
    from citewise.kb import KnowledgeBase
    from citewise.models import Section

    body = "\n\n".join(f"Paragraph {p} about serving widgets. " * 12 for p in range(6))
    documents = {
        f"doc-{d}": [Section(f"doc-{d}", f"Doc {d}", (f"Doc {d}",), 1, "", "", f"doc-{d}", body)]
        for d in range(3)
    }
    settings = Settings(home=tmp_path / "home")
    counts, chunks = [], []
    for name in ("first", "second"):
        inner = Counting(minilm)
        with EmbeddingCache(settings.cache_path) as cache:
            kb = KnowledgeBase.create(
                name, settings=settings, embedder=CachedEmbedder(inner, cache)
            )
            kb.add_sections(documents)
            chunks.append(
                sorted((c.chunk_id, c.text) for c in kb.store.get(sorted(kb.store.chunk_ids())))
            )
            kb.library.close()
        counts.append(len(inner.tokenized))
    assert counts[0] >= 3 and counts[1] == 0
    assert chunks[0] == chunks[1]
