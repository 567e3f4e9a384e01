"""A SQLite cache of embeddings keyed by model and text hash, and an embedder that uses it."""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from citewise.embedding.base import Embedder, Vectors
from citewise.embedding.window_cache import WindowCache

# SQLite builds before 3.32 allow 999 parameters per statement; stay well under.
_QUERY_CHUNK = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_id, text_sha256)
) WITHOUT ROWID
"""


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _positions(texts: Sequence[str]) -> dict[bytes, list[int]]:
    """Each distinct text's digest and its positions in ``texts``."""
    positions: dict[bytes, list[int]] = {}
    for i, text in enumerate(texts):
        positions.setdefault(_digest(text), []).append(i)
    return positions


log = logging.getLogger(__name__)


class EmbeddingCache:
    """Maps (model_id, sha256(text)) to a float32 vector in one SQLite file (WAL mode).

    One connection shared under a lock: safe for the threads of one process, and other
    processes can read the file meanwhile.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._write_failed = False
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
        # Where chunks' token windows were cut, in the same file (embedding/window_cache.py).
        self.windows = WindowCache(self._db, self._lock)

    def get_many(self, model_id: str, texts: Sequence[str]) -> dict[int, Vectors]:
        """Cached vectors by position in ``texts``; positions not cached are absent."""
        positions = _positions(texts)
        found: dict[int, Vectors] = {}
        for rows in self._parts(model_id, positions):
            for digest, _, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                for i in positions[digest]:
                    found[i] = vector.copy()
        return found

    def read_into(self, model_id: str, texts: Sequence[str], out: Vectors) -> npt.NDArray[np.bool_]:
        """Copy the cached vector of ``texts[i]`` into ``out[i]`` (a float32 matrix, one row
        per text) where there is one of ``out``'s width; return which rows were (bools)."""
        positions = _positions(texts)
        dim = out.shape[1]
        found = np.zeros(len(texts), dtype=bool)
        for rows in self._parts(model_id, positions):
            # Another size: the id was reused for a different model (a miss).
            fits = [(positions[digest], blob) for digest, size, blob in rows if size == dim]
            if not fits:
                continue
            first = [at[0] for at, _ in fits]
            # One copy of a statement's blobs, not an array per row (10,588 on SciFact),
            # and a statement's at a time: a build's whole would be one more copy of them.
            joined = b"".join(blob for _, blob in fits)
            out[first] = np.frombuffer(joined, dtype=np.float32).reshape(-1, dim)
            found[first] = True
            for at, _ in fits:
                if len(at) > 1:  # the same text more than once
                    out[at[1:]] = out[at[0]]
                    found[at[1:]] = True
        return found

    def _parts(
        self, model_id: str, positions: Mapping[bytes, list[int]]
    ) -> Iterator[list[tuple[bytes, int, bytes]]]:
        """The cached rows of ``positions``' digests, (digest, dim, blob), one statement's
        at a time; whole rows only."""
        # In key order: neighbouring keys share the table's pages, so each page is read once
        # rather than once per key (SciFact's windows: about half the CPU of a random order).
        keys = sorted(positions)
        for start in range(0, len(keys), _QUERY_CHUNK):
            part = keys[start : start + _QUERY_CHUNK]
            marks = ",".join("?" * len(part))
            with self._lock:
                rows = self._db.execute(
                    "SELECT text_sha256, dim, vector FROM embeddings "
                    f"WHERE model_id = ? AND text_sha256 IN ({marks})",
                    [model_id, *part],
                ).fetchall()
            # A truncated row is a miss, not a crash.
            yield [(bytes(key), dim, blob) for key, dim, blob in rows if len(blob) == 4 * dim]

    def put_many(self, model_id: str, texts: Sequence[str], vectors: Vectors) -> None:
        """Store ``vectors[i]`` for ``texts[i]`` (replacing what was there)."""
        array = np.asarray(vectors, dtype=np.float32)
        if array.ndim != 2 or array.shape[0] != len(texts):
            raise ValueError(f"{len(texts)} texts but vectors of shape {array.shape}")
        rows = [
            (model_id, _digest(text), array.shape[1], np.ascontiguousarray(vec).tobytes())
            for text, vec in zip(texts, array, strict=True)
        ]
        try:
            with self._lock, self._db:
                self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)
        except sqlite3.OperationalError as error:
            # A cache: a full disk costs the next run some re-embedding, never this one.
            # Said once: one line per batch would bury the error that follows it.
            if not self._write_failed:
                log.warning("embedding cache not updated (%s): %s", self.path, error)
            self._write_failed = True

    def count(self, model_id: str | None = None) -> int:
        with self._lock:
            if model_id is None:
                row = self._db.execute("SELECT count(*) FROM embeddings").fetchone()
            else:
                row = self._db.execute(
                    "SELECT count(*) FROM embeddings WHERE model_id = ?", (model_id,)
                ).fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class CachedEmbedder:
    """An Embedder that asks ``cache`` first and embeds only the texts it lacks.

    Queries are passed straight through: they are cheap, rarely repeat, and some models
    embed them differently from passages.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.window_chars = inner.window_chars
        # Read by windows_for_many: unchanged text is not tokenized again to cut windows.
        self.window_cache = cache.windows

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # A vector of another size means the id was reused for a different model: re-embed.
        found = self.cache.read_into(self.model_id, texts, out)
        missing: dict[str, list[int]] = {}
        if not found.all():
            for i in np.flatnonzero(~found).tolist():
                missing.setdefault(texts[i], []).append(i)
        if missing:
            new_texts = list(missing)
            vectors = np.asarray(self.inner.embed_documents(new_texts), dtype=np.float32)
            self.cache.put_many(self.model_id, new_texts, vectors)
            for text, vector in zip(new_texts, vectors, strict=True):
                out[missing[text]] = vector
        return out

    def cached_documents(self, texts: Sequence[str]) -> tuple[Vectors, npt.NDArray[np.bool_]]:
        """The cached vectors of ``texts`` (one row each) and which rows were cached; nothing
        is embedded. Rows not cached are undefined."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        return out, self.cache.read_into(self.model_id, texts, out)

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)

    def __getattr__(self, name: str) -> object:
        # Windows are cut by the wrapped model's tokens when it can count them
        # (``TokenWindowed``): the cache must not hide that.
        if name in ("window_tokens", "token_spans", "tokenizer_id"):
            return getattr(self.inner, name)
        raise AttributeError(name)
