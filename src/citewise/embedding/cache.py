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

# A row per vector, looked up through its key's index. The table the cache had before,
# ``embeddings`` (WITHOUT ROWID, keyed by the same pair), kept each row in its key's b-tree,
# where a 384-float vector is more than a row's share of a page: every vector had an
# overflow page of its own, read apart from its key (a file 2.3 times as large as here).
# Read in row order (see ``_parts``), SciFact's 10,588 window vectors of one build take 0.101 s
# of CPU instead of 0.116 (process CPU, medians of 7 builds). Its rows are converted when the
# file is opened; the pages they leave are reused by later writes.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    id INTEGER PRIMARY KEY,
    model_id TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (model_id, text_sha256)
)
"""
_OLD_TABLE = "embeddings"


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _positions(texts: Sequence[str]) -> dict[bytes, list[int]]:
    """Each distinct text's digest and its positions in ``texts``."""
    # _digest inlined, and a list made only for a new digest: a build's windows number
    # tens of thousands (SciFact's 10,588: 16 ms of CPU here before).
    sha256 = hashlib.sha256
    positions: dict[bytes, list[int]] = {}
    for i, text in enumerate(texts):
        digest = sha256(text.encode("utf-8", "surrogatepass")).digest()
        found = positions.get(digest)
        if found is None:
            positions[digest] = [i]
        else:
            found.append(i)
    return positions


log = logging.getLogger(__name__)


class EmbeddingCache:
    """Maps (model_id, sha256(text)) to a float32 vector in one SQLite file (WAL mode).

    One connection shared under a lock: safe for the threads of one process, and other
    processes can read the file meanwhile.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        """``timeout``: seconds a write waits while another process writes the file."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._write_failed = False
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=timeout)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
            # A file written before ``vectors`` existed: its rows are moved there, or read
            # where they are while that cannot be done (another process writes meanwhile).
            self._old = self._convert()
        # Where chunks' token windows were cut, in the same file (embedding/window_cache.py).
        self.windows = WindowCache(self._db, self._lock)

    def _convert(self) -> bool:
        """Move the older table's rows into ``vectors`` and drop it, in one transaction (the
        caller holds the lock); whether the older table is still there to be read."""
        try:
            if not self._has_old_table():  # the usual case: no write lock taken
                return False
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if not self._has_old_table():  # converted by another process meanwhile
                    self._db.rollback()
                    return False
                # A key in both keeps the row of ``vectors``: it was written since.
                self._db.execute(
                    "INSERT OR IGNORE INTO vectors (model_id, text_sha256, dim, vector) "
                    f"SELECT model_id, text_sha256, dim, vector FROM {_OLD_TABLE}"
                )
                self._db.execute(f"DROP TABLE {_OLD_TABLE}")
                self._db.commit()
                return False
            except BaseException:
                self._db.rollback()
                raise
        except sqlite3.Error as error:  # busy past the timeout, a full disk: next time
            log.warning("embedding cache %s: older rows not converted yet: %s", self.path, error)
            try:
                return self._has_old_table()
            except sqlite3.Error:
                return False

    def _has_old_table(self) -> bool:
        return (
            self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_OLD_TABLE,)
            ).fetchone()
            is not None
        )

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
        # The keys' rows first (their index alone), then the rows in row order: the vectors
        # written together (a build's windows) share their pages, so each page is read
        # once rather than once per vector. A row is taken only with the model and key asked
        # for: between the two reads another process may have replaced it, and its id gone
        # to another row.
        keys = sorted(positions)
        ids: list[tuple[int, bytes]] = []
        for start in range(0, len(keys), _QUERY_CHUNK):
            part = keys[start : start + _QUERY_CHUNK]
            marks = ",".join("?" * len(part))
            with self._lock:
                ids += self._db.execute(
                    "SELECT id, text_sha256 FROM vectors "
                    f"WHERE model_id = ? AND text_sha256 IN ({marks})",
                    [model_id, *part],
                ).fetchall()
        ids.sort()
        asked = dict(ids)
        for start in range(0, len(ids), _QUERY_CHUNK):
            numbers = [number for number, _ in ids[start : start + _QUERY_CHUNK]]
            marks = ",".join("?" * len(numbers))
            with self._lock:
                # The model is compared here, not in SQL: ``model_id = ?`` there doubled
                # the statement's time (a row's columns are checked after its lookup).
                rows = self._db.execute(
                    "SELECT id, model_id, text_sha256, dim, vector FROM vectors "
                    f"WHERE id IN ({marks})",
                    numbers,
                ).fetchall()
            # A truncated row is a miss, not a crash.
            yield [
                (key, dim, blob)
                for number, model, key, dim, blob in rows
                if model == model_id and asked[number] == key and len(blob) == 4 * dim
            ]
        if self._old:
            found = set(asked.values())
            yield from self._old_parts(model_id, [key for key in keys if key not in found])

    def _old_parts(
        self, model_id: str, keys: Sequence[bytes]
    ) -> Iterator[list[tuple[bytes, int, bytes]]]:
        """``_parts`` of the older table, for a file not converted yet."""
        for start in range(0, len(keys), _QUERY_CHUNK):
            part = keys[start : start + _QUERY_CHUNK]
            marks = ",".join("?" * len(part))
            try:
                with self._lock:
                    rows = self._db.execute(
                        f"SELECT text_sha256, dim, vector FROM {_OLD_TABLE} "
                        f"WHERE model_id = ? AND text_sha256 IN ({marks})",
                        [model_id, *part],
                    ).fetchall()
            except sqlite3.OperationalError:  # converted by another process since: all moved
                self._old = False
                return
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
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors (model_id, text_sha256, dim, vector) "
                    "VALUES (?, ?, ?, ?)",
                    rows,
                )
        except sqlite3.OperationalError as error:
            # A cache: a full disk costs the next run some re-embedding, never this one.
            # Said once: one line per batch would bury the error that follows it.
            if not self._write_failed:
                log.warning("embedding cache not updated (%s): %s", self.path, error)
            self._write_failed = True

    def count(self, model_id: str | None = None) -> int:
        """How many (model, text) vectors the cache holds (of ``model_id`` when given)."""
        where, args = ("WHERE model_id = ?", [model_id]) if model_id is not None else ("", [])
        query = f"SELECT count(*) FROM vectors {where}"
        if self._old:  # not converted yet: a key in both tables counts once
            query = (
                f"SELECT count(*) FROM (SELECT model_id, text_sha256 FROM vectors {where} "
                f"UNION SELECT model_id, text_sha256 FROM {_OLD_TABLE} {where})"
            )
            args *= 2
        with self._lock:
            row = self._db.execute(query, args).fetchone()
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
