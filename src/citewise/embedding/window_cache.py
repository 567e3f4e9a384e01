"""Where each chunk's token windows were cut, kept beside the embedding cache across processes.

Cutting a chunk into windows runs the model's tokenizer over its whole text (the tokens decide
where windows end): most of a build whose vectors are all in the embedding cache
(benchmarks/peers.md). A chunk's windows depend only on its text and on the cutting settings,
so they are kept in the embedding cache's file (table ``windows``), keyed by the sha256 of the
settings and the text; a re-index, or a second knowledge base over the same documents, reads
them instead of tokenizing again.

The key holds everything the windows depend on: the embedder's model and tokenizer identity,
its window size, and the digest of the code that cuts (``windows.py``), so a change to any of
them misses instead of serving stale windows. A window is stored as spans of the chunk's own
text (heading, body), so a row is a few dozen bytes and can only ever rebuild substrings of
the text it is looked up with; a row that does not decode into such spans is a miss (and is
replaced). The table keeps the most recently written ``max_rows`` cuts (oldest dropped first).
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import struct
import threading
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["MAX_ROWS", "WindowCache", "decode", "encode"]

log = logging.getLogger(__name__)

# About 100 bytes a row with its key and index: 1M cuts is ~100 MB, a few percent of the
# vectors the same chunks hold in the embedding cache.
MAX_ROWS = 1_000_000
_QUERY_CHUNK = 500  # parameters per statement, under old SQLite's 999

_SCHEMA = """
CREATE TABLE IF NOT EXISTS windows (
    id INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE, cut BLOB NOT NULL
)
"""
# Each window as four int32: heading start and end, body start and end in the chunk's text.
# A window with a heading is ``text[hs:he] + "\n\n" + text[bs:be]``; without, ``text[bs:be]``.
_FIELDS = 4
_SPAN = struct.Struct(f"@{_FIELDS}i")  # one window's four, as array("i") holds them
_JOIN = "\n\n"


def _code_digest() -> str:
    """The window-cutting code's identity: a change to it must miss, not reuse old cuts."""
    from citewise.embedding import windows

    try:
        source = Path(windows.__file__).read_bytes()
    except OSError:  # no source beside the bytecode: the package version stands for it
        from importlib.metadata import version

        source = f"citewise {version('citewise')}".encode()
    return hashlib.sha256(source).hexdigest()[:16]


def encode(text: str, windows: Sequence[str]) -> bytes | None:
    """``windows`` as spans of ``text``, or None when one is not made of them (not cached)."""
    spans = array("i")
    for window in windows:
        at = text.find(window)
        if at >= 0:
            spans.extend((0, 0, at, at + len(window)))
            continue
        heading, sep, body = window.partition(_JOIN)
        head_at = text.find(heading) if heading and sep else -1
        body_at = text.find(body) if head_at >= 0 else -1
        if body_at < 0:
            return None
        spans.extend((head_at, head_at + len(heading), body_at, body_at + len(body)))
    blob = spans.tobytes()
    # Stored only if it reads back as exactly these windows.
    return blob if decode(text, blob) == list(windows) else None


def decode(text: str, blob: bytes) -> list[str] | None:
    """The windows ``blob`` (from :func:`encode`) describes in ``text``; None if malformed."""
    if not blob or len(blob) % _SPAN.size:
        return None
    size = len(text)
    windows: list[str] = []
    # Unpacked a window at a time (as the array ``encode`` wrote: native int32), not sliced
    # out of an array: a build decodes one cut per chunk.
    for hs, he, bs, be in _SPAN.iter_unpack(blob):
        if not (0 <= hs <= he <= size and 0 <= bs <= be <= size):
            return None
        body = text[bs:be]
        windows.append(f"{text[hs:he]}{_JOIN}{body}" if he > hs else body)
    return windows


class WindowCache:
    """The ``windows`` table of an embedding cache's SQLite file, through its connection.

    ``db`` and ``lock`` are the embedding cache's (one connection per process, shared by its
    threads). Failures to read or write are a miss or a skipped write, said once in the log:
    windows are always computed when they cannot be read.
    """

    def __init__(
        self, db: sqlite3.Connection, lock: threading.Lock, *, max_rows: int = MAX_ROWS
    ) -> None:
        self._db = db
        self._lock = lock
        self.max_rows = max_rows
        self._failed = False
        self._code = _code_digest()
        try:
            with self._lock, self._db:
                self._db.execute(_SCHEMA)
        except sqlite3.Error as error:
            self._warn("not available", error)

    def settings_id(self, embedder: object) -> str:
        """What a cut depends on besides the text, for ``embedder`` cutting by its tokens."""
        model = getattr(embedder, "model_id", "")
        tokenizer = getattr(embedder, "tokenizer_id", "")
        size = getattr(embedder, "window_tokens", "")
        return f"{model}\x00{tokenizer}\x00{size}\x00{self._code}"

    def windows(
        self, settings: str, texts: Sequence[str], cut: Callable[[str], list[str]]
    ) -> list[list[str]]:
        """Each text's windows: from the table when there, else ``cut`` (and then stored)."""
        prefix = settings.encode() + b"\x00"
        keys = [hashlib.sha256(prefix + t.encode("utf-8", "surrogatepass")).digest() for t in texts]
        found = self._read(keys)
        out: list[list[str]] = []
        new: dict[bytes, bytes] = {}
        for key, text in zip(keys, texts, strict=True):
            blob = found.get(key)
            windows = decode(text, blob) if blob is not None else None
            if windows is None:
                windows = cut(text)
                encoded = encode(text, windows)
                if encoded is not None:
                    new[key] = encoded
            out.append(windows)
        if new:
            self._write(new)
        return out

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM windows").fetchone()[0])

    def _read(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        unique = list(dict.fromkeys(keys))
        found: dict[bytes, bytes] = {}
        try:
            with self._lock:
                for start in range(0, len(unique), _QUERY_CHUNK):
                    part = unique[start : start + _QUERY_CHUNK]
                    marks = ",".join("?" * len(part))
                    rows = self._db.execute(
                        f"SELECT key, cut FROM windows WHERE key IN ({marks})", part
                    )
                    found.update((bytes(key), bytes(cut)) for key, cut in rows)
        except sqlite3.Error as error:  # a damaged or locked cache: cut them all
            self._warn("not read", error)
        return found

    def _write(self, new: dict[bytes, bytes]) -> None:
        try:
            with self._lock, self._db:
                # REPLACE gives the row a new id: the newest cuts are the last dropped.
                self._db.executemany(
                    "INSERT OR REPLACE INTO windows (key, cut) VALUES (?, ?)", new.items()
                )
                self._db.execute(
                    "DELETE FROM windows WHERE id <= (SELECT max(id) FROM windows) - ?",
                    (self.max_rows,),
                )
        except sqlite3.Error as error:  # a cache: a full disk costs the next run a re-cut
            self._warn("not updated", error)

    def _warn(self, what: str, error: sqlite3.Error) -> None:
        # Said once: one line per batch would bury the error that follows it.
        if not self._failed:
            log.warning("window cache %s: %s", what, error)
        self._failed = True
