"""Tests for the SQLite embedding cache and the caching embedder."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from citewise.embedding import CachedEmbedder, Embedder, EmbeddingCache
from citewise.embedding import cache as cache_module
from citewise.embedding.base import Vectors, l2_normalise


class HashEmbedder:
    """Deterministic stand-in for a model that counts what it is asked to embed."""

    model_id = "hash-v1"
    dim = 16
    window_chars = 500

    def __init__(self) -> None:
        self.embedded: list[str] = []
        self.queries = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.embedded.extend(texts)
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], np.uint8) for t in texts]
        return l2_normalise(np.array(rows, dtype=np.float32).reshape(len(texts), self.dim) - 127)

    def embed_query(self, text: str) -> Vectors:
        self.queries += 1
        return self.embed_documents([text]).reshape(self.dim)


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[EmbeddingCache]:
    with EmbeddingCache(tmp_path / "sub" / "cache.sqlite") as opened:
        yield opened


def test_second_call_embeds_nothing(cache: EmbeddingCache) -> None:
    inner = HashEmbedder()
    embedder = CachedEmbedder(inner, cache)
    assert isinstance(embedder, Embedder)
    texts = ["alpha", "beta", "gamma"]
    first = embedder.embed_documents(texts)
    assert inner.embedded == texts
    second = embedder.embed_documents(texts)
    assert inner.embedded == texts  # nothing new
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, HashEmbedder().embed_documents(texts))


def test_only_missing_texts_are_embedded_once_each(cache: EmbeddingCache) -> None:
    inner = HashEmbedder()
    embedder = CachedEmbedder(inner, cache)
    embedder.embed_documents(["alpha", "beta"])
    inner.embedded.clear()
    out = embedder.embed_documents(["beta", "delta", "alpha", "delta"])
    assert inner.embedded == ["delta"]
    np.testing.assert_array_equal(
        out, HashEmbedder().embed_documents(["beta", "delta", "alpha", "delta"])
    )


def test_cache_persists_across_opens(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with EmbeddingCache(path) as cache:
        CachedEmbedder(HashEmbedder(), cache).embed_documents(["persisted"])
    inner = HashEmbedder()
    with EmbeddingCache(path) as cache:
        CachedEmbedder(inner, cache).embed_documents(["persisted"])
        assert cache.count() == 1
    assert inner.embedded == []


def test_entries_are_separated_by_model(cache: EmbeddingCache) -> None:
    vectors = np.eye(2, dtype=np.float32)
    cache.put_many("model-a", ["x", "y"], vectors)
    assert cache.get_many("model-b", ["x", "y"]) == {}
    got = cache.get_many("model-a", ["y", "z", "x"])
    assert sorted(got) == [0, 2]
    np.testing.assert_array_equal(got[0], vectors[1])
    np.testing.assert_array_equal(got[2], vectors[0])
    assert got[0].dtype == np.float32
    assert cache.count("model-a") == 2


def test_many_texts_beyond_one_sql_statement(cache: EmbeddingCache) -> None:
    texts = [f"t{i}" for i in range(1200)]
    vectors = np.random.default_rng(0).random((1200, 4), dtype=np.float32)
    cache.put_many("m", texts, vectors)
    got = cache.get_many("m", texts)
    assert len(got) == 1200
    np.testing.assert_array_equal(got[1199], vectors[1199])


def test_vectors_of_another_size_are_re_embedded(cache: EmbeddingCache) -> None:
    cache.put_many("hash-v1", ["alpha"], np.ones((1, 3), dtype=np.float32))
    inner = HashEmbedder()
    out = CachedEmbedder(inner, cache).embed_documents(["alpha"])
    assert inner.embedded == ["alpha"]
    assert out.shape == (1, 16)


def test_put_many_checks_shapes(cache: EmbeddingCache) -> None:
    with pytest.raises(ValueError):
        cache.put_many("m", ["a", "b"], np.ones((1, 4), dtype=np.float32))


def test_queries_pass_through(cache: EmbeddingCache) -> None:
    inner = HashEmbedder()
    embedder = CachedEmbedder(inner, cache)
    assert embedder.embed_query("q").shape == (16,)
    assert inner.queries == 1
    assert cache.count() == 0


def test_uses_wal_and_works_across_threads(cache: EmbeddingCache) -> None:
    import sqlite3

    other = sqlite3.connect(cache.path)
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        other.close()
    embedder = CachedEmbedder(HashEmbedder(), cache)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(20):
                embedder.embed_documents([f"{n}-{i}", "shared"])
        except BaseException as exc:  # surfaced below: threads swallow exceptions
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert cache.count() == 81


def test_read_into_fills_found_rows_only(cache: EmbeddingCache) -> None:
    # Repeated texts, a miss, a row of another width and a truncated row, across statements.
    texts = [f"text {i}" for i in range(1_200)]
    vectors = HashEmbedder().embed_documents(texts)
    cache.put_many("m", texts, vectors)
    cache.put_many("m", ["wide"], np.ones((1, 32), dtype=np.float32))
    with cache._lock, cache._db:
        cache._db.execute(
            "INSERT OR REPLACE INTO vectors (model_id, text_sha256, dim, vector) "
            "VALUES ('m', ?, 16, ?)",
            (hashlib.sha256(b"cut").digest(), b"\0" * 20),
        )
    asked = ["text 7", "missing", "text 1199", "wide", "text 7", "cut", *texts[::-1]]
    out = np.full((len(asked), 16), -9.0, dtype=np.float32)

    found = cache.read_into("m", asked, out)

    assert found.tolist() == [True, False, True, False, True, False] + [True] * len(texts)
    expected = {t: v for t, v in zip(texts, vectors, strict=True)}
    for text, row, hit in zip(asked, out, found, strict=True):
        if hit:
            assert row.tobytes() == expected[text].tobytes()
        else:
            assert (row == -9.0).all()
    # get_many agrees on what is cached (it also returns rows of another width).
    many = cache.get_many("m", asked)
    assert sorted(many) == [0, 2, 3, 4, *range(6, len(asked))]
    assert many[3].shape == (32,)


_OLD_SCHEMA = """
CREATE TABLE embeddings (
    model_id TEXT NOT NULL, text_sha256 BLOB NOT NULL, dim INTEGER NOT NULL,
    vector BLOB NOT NULL, PRIMARY KEY (model_id, text_sha256)
) WITHOUT ROWID
"""


def old_cache(path: Path, texts: Sequence[str], vectors: Vectors) -> None:
    """A cache file as citewise wrote it before the ``vectors`` table (and its windows)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(_OLD_SCHEMA)
        db.executemany(
            "INSERT INTO embeddings VALUES (?, ?, ?, ?)",
            [(HashEmbedder.model_id, hashlib.sha256(t.encode()).digest(), 16, v.tobytes())
             for t, v in zip(texts, vectors, strict=True)],
        )  # fmt: skip
        db.execute("CREATE TABLE windows (id INTEGER PRIMARY KEY, key BLOB UNIQUE, cut BLOB)")
        db.execute("INSERT INTO windows (key, cut) VALUES (x'00', x'01')")


def tables(path: Path) -> set[str]:
    with closing(sqlite3.connect(path)) as db:
        return {name for (name,) in db.execute("SELECT name FROM sqlite_schema WHERE type='table'")}


def test_a_cache_of_the_older_layout_is_converted_with_every_vector(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    texts = [f"text {i}" for i in range(1_100)]  # beyond one statement
    vectors = HashEmbedder().embed_documents(texts)
    old_cache(path, texts, vectors)

    with EmbeddingCache(path) as cache:
        assert cache.count() == cache.count(HashEmbedder.model_id) == len(texts)
        out = np.zeros((len(texts) + 1, 16), dtype=np.float32)
        found = cache.read_into(HashEmbedder.model_id, [*texts, "new"], out)
        assert found.tolist() == [True] * len(texts) + [False]
        assert out[:-1].tobytes() == np.asarray(vectors, dtype=np.float32).tobytes()
        assert cache.windows.count() == 1  # the rest of the file is as it was

    assert "embeddings" not in tables(path) and "vectors" in tables(path)
    inner = HashEmbedder()
    with EmbeddingCache(path) as cache:
        CachedEmbedder(inner, cache).embed_documents([*texts, "new"])
        assert inner.embedded == ["new"] and cache.count() == len(texts) + 1


def test_a_cache_that_cannot_be_converted_now_is_read_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    texts = ["alpha", "beta", "gamma"]
    vectors = HashEmbedder().embed_documents(texts)
    old_cache(path, texts, vectors)
    with closing(sqlite3.connect(path)) as other:
        # The table of the new layout is there (an open whose conversion failed made it)...
        other.execute(cache_module._SCHEMA)
        other.commit()
        other.execute("BEGIN IMMEDIATE")  # ...and another process writes: no conversion now
        with EmbeddingCache(path, timeout=0.1) as cache:
            other.rollback()
            inner = HashEmbedder()
            embedder = CachedEmbedder(inner, cache)
            newer = embedder.embed_documents(["beta", "delta"])
            assert inner.embedded == ["delta"]
            assert newer[0].tobytes() == vectors[1].tobytes()
            # A vector written since, for a key of the older table, is the one read.
            cache.put_many(HashEmbedder.model_id, ["alpha"], np.ones((1, 16), np.float32))
            assert cache.get_many(HashEmbedder.model_id, ["alpha"])[0].tolist() == [1.0] * 16
            assert cache.count() == 4  # alpha, beta, gamma, delta: each once
        assert "embeddings" in tables(path)
    with EmbeddingCache(path) as cache:  # converted at the next open, the newer row kept
        assert "embeddings" not in tables(path) and cache.count() == 4
        many = cache.get_many(HashEmbedder.model_id, ["alpha", "gamma", "delta"])
        assert many[0].tolist() == [1.0] * 16
        assert many[1].tobytes() == vectors[2].tobytes() and 2 in many


def test_a_row_replaced_between_its_two_reads_is_a_miss(cache: EmbeddingCache) -> None:
    """A key's row is found by its index, then read by its id: another process that
    replaces it meanwhile (its id going to another model's row) must not hand that row over."""
    vectors = HashEmbedder().embed_documents(["a", "b"])
    cache.put_many("m", ["a", "b"], vectors)
    b = hashlib.sha256(b"b").digest()
    reused: list[int] = []

    class Racing:
        """The cache's connection, with another process writing just before rows are read."""

        def __init__(self, inner: sqlite3.Connection, other: sqlite3.Connection) -> None:
            self.inner, self.other = inner, other

        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql.startswith("SELECT id, model_id") and not reused:
                with self.other:  # b's row goes; another model's row for "b" takes its id
                    self.other.execute("DELETE FROM vectors WHERE text_sha256 = ?", (b,))
                    self.other.execute(
                        "INSERT INTO vectors (model_id, text_sha256, dim, vector) "
                        "VALUES ('n', ?, 16, ?)",
                        (b, np.zeros(16, np.float32).tobytes()),
                    )
                    reused.extend(row[0] for row in self.other.execute("SELECT id FROM vectors"))
            return self.inner.execute(sql, *args)

    ids = dict(cache._db.execute("SELECT text_sha256, id FROM vectors").fetchall())
    with closing(sqlite3.connect(cache.path)) as other:
        inner = cache._db
        cache._db = Racing(inner, other)  # type: ignore[assignment]
        try:
            got = cache.get_many("m", ["a", "b"])
        finally:
            cache._db = inner
    assert sorted(reused) == sorted(ids.values())  # the id of m's "b" is n's "b" now
    assert sorted(got) == [0] and got[0].tobytes() == vectors[0].tobytes()
