"""FTS5's own BM25, precomputed: a per-generation impact matrix (terms x chunks) for keyword search.

FTS5 scores a chunk on the fly, walking every matching row's position list; at a million
chunks a common term costs tens of milliseconds. Here each (term, chunk) posting holds its
whole BM25 contribution, computed once per store generation from FTS5's own index (its
``fts5vocab`` instance table, so tokens, stems and lengths are FTS5's, never re-derived) with
FTS5's formula (``fts5_aux.c``: k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)) floored
at 1e-6, the chunk's token count against the table's average). A query of single-token terms
is then a sum over a few sparse rows and a top k; the score equals ``-bm25(chunks_fts)``.

What still goes to FTS5 (``impact_rows`` returns None): a term FTS5 would read as a phrase
(tokenizes to other than one token), k over MAX_K, and filters, identifiers and CJK (handled in
``sqlite_keyword``). The matrix is saved beside the database (``{db}.impact/{generation}/``,
numpy files opened memory-mapped), so each generation of the text is built once, by whichever
process asks first; a write of text makes a new one, rebuilt in full on its first keyword
search (filling vectors in does not: ``sqlite_schema.text_generation``).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
import uuid
from pathlib import Path

import numpy as np

from citewise.memory import release_free_memory
from citewise.store.sqlite_impact_matrix import ImpactIndex, build
from citewise.store.sqlite_schema import C_CHUNK_COLUMNS, text_generation

__all__ = [
    "ImpactCache",
    "ImpactIndex",
    "build",
    "load_or_build",
    "remove_files",
    "scored_rows",
    "tokens",
]

MAX_K = 10_000  # three bound parameters a row, under SQLite's 32766
TOKENIZER = "porter unicode61 remove_diacritics 2"  # chunks_fts's, see sqlite_schema.SCHEMA


# A folder saved before ``lengths`` existed does not load: its generation is built again.
_ARRAYS = ("indptr", "positions", "impacts", "rids", "lengths")


def folder(db: Path) -> Path:
    return Path(f"{db}.impact")


def load_or_build(conn: sqlite3.Connection, generation: str, db: Path | None) -> ImpactIndex:
    """This generation's matrix from beside ``db`` (memory-mapped), else built and saved."""
    if db is None:
        return build(conn, generation)
    target = folder(db) / generation
    loaded = _load(target, generation)
    if loaded is not None:
        return loaded
    index = build(conn, generation)
    try:
        _save(index, target)
    except OSError:  # a read-only or full disk, or the file was removed: search from memory
        return index
    return index


def _load(target: Path, generation: str) -> ImpactIndex | None:
    """The matrix saved in ``target``, or None (never saved, or removed meanwhile: a newer
    generation's save or a rebuild deletes the folders of older ones)."""
    try:
        terms = json.loads((target / "terms.json").read_text())
        mapped = {name: np.load(target / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
    except (OSError, ValueError):
        if (target / "terms.json").is_file():
            # Saved whole (terms.json comes last) but not readable now: an older citewise's
            # arrays (no ``lengths``), or a folder being deleted. Removed, so this
            # generation's new matrix can be saved in its place.
            shutil.rmtree(target, ignore_errors=True)
        return None
    # Plain ndarray views of the maps (still memory-mapped, nothing copied): numpy's memmap
    # subclass runs Python code on every slice, a third of a query's scoring time.
    loaded = {name: np.asarray(array) for name, array in mapped.items()}
    return ImpactIndex(generation, terms, **loaded)


def _save(index: ImpactIndex, target: Path) -> None:
    # Written under a private name and renamed: a reader sees a whole matrix or none.
    # terms.json is written last and marks a complete folder.
    # Never with parents: a folder removed meanwhile (a rebuilt or dropped knowledge base's
    # generation) must stay removed, not come back holding a matrix nobody reads.
    target.parent.mkdir(exist_ok=True)
    partial = target.with_name(f".{target.name}-{uuid.uuid4().hex}")
    partial.mkdir()
    try:
        for name in _ARRAYS:
            np.save(partial / f"{name}.npy", getattr(index, name))
        (partial / "terms.json").write_text(json.dumps(index.terms))
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    try:
        os.rename(partial, target)
    except OSError:  # another process saved this generation first
        shutil.rmtree(partial, ignore_errors=True)
        return
    for old in target.parent.iterdir():  # older generations' matrices
        if old != target and not old.name.startswith("."):
            shutil.rmtree(old, ignore_errors=True)


def remove_files(db: Path) -> None:
    """Delete the saved matrices of the knowledge base in ``db`` (when it is dropped)."""
    shutil.rmtree(folder(db), ignore_errors=True)


_local = threading.local()
# Each term's tokens, as FTS5 gave them: the tokenizer is fixed, so they never change, and
# queries share most of their words (a stemmer's cache, as PyStemmer keeps one for bm25s).
# Emptied when full rather than kept in LRU order: cheaper per lookup, rarely full.
_SPLITS: dict[str, tuple[str, ...]] = {}
_SPLITS_MAX = 20_000


def tokens(terms: list[str]) -> list[list[str]]:
    """Each term as chunks_fts's tokenizer splits and stems it."""
    found = {term: _SPLITS.get(term) for term in terms}
    missing = [term for term, split in found.items() if split is None]
    if missing:
        new = dict(zip(missing, _tokenize(missing), strict=True))
        found.update(new)
        if len(_SPLITS) + len(new) > _SPLITS_MAX:
            _SPLITS.clear()
        _SPLITS.update(new)
    return [list(found[term] or ()) for term in terms]


def _tokenize(terms: list[str]) -> list[tuple[str, ...]]:
    """Each term through chunks_fts's tokenizer (a private in-memory FTS5 table)."""
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute(f"CREATE VIRTUAL TABLE q USING fts5(t, tokenize='{TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, instance)")
        _local.conn = conn
    # Emptied by the ROLLBACK below, so never deleted from: an FTS5 DELETE, even of nothing,
    # cost more than the insert and the read together.
    conn.execute("BEGIN")
    try:
        conn.executemany("INSERT INTO q (rowid, t) VALUES (?, ?)", enumerate(terms))
        found: list[list[str]] = [[] for _ in terms]
        for doc, token in conn.execute('SELECT doc, term FROM qv ORDER BY doc, "offset"'):
            found[doc].append(token)
    finally:
        conn.execute("ROLLBACK")  # the table stays empty between calls
    return [tuple(split) for split in found]


class ImpactCache:
    """Each knowledge base's impact matrix for its current generation.

    A saved matrix is mapped at once; a missing one is built in the background from a
    connection of its own (``background``), while FTS5 answers: the first search after a
    write never waits for a build (seconds at 100k windows). ``background=False`` builds it
    in the caller, as a store without a file on disk always does. ``close`` interrupts the
    builds still running and waits for them: nothing is written after the store is closed.
    """

    def __init__(self, *, background: bool = True) -> None:
        self.background = background
        self._by_kb: dict[str, ImpactIndex] = {}
        self._building: dict[tuple[str, str], threading.Thread] = {}
        self._reading: dict[tuple[str, str], sqlite3.Connection] = {}
        self._stopping: list[str | None] = []  # knowledge bases (None: all) being stopped
        self._abandoned: set[tuple[str, str]] = set()  # builds stopped from their own thread
        self._lock = threading.Lock()

    def index(
        self, kb: str, conn: sqlite3.Connection, generation: str, db: Path | None = None
    ) -> ImpactIndex | None:
        """The matrix of ``generation``, or None while it is being built (ask FTS5)."""
        cached = self._by_kb.get(kb)
        if cached is not None and cached.generation == generation:
            return cached
        with self._lock:
            cached = self._by_kb.get(kb)
            if cached is not None and cached.generation == generation:
                return cached
            if db is None or not self.background:
                cached = load_or_build(conn, generation, db)
            else:
                cached = _load(folder(db) / generation, generation)
            if cached is not None:
                self._by_kb[kb] = cached
                return cached
            key = (kb, generation)
            if key not in self._building and not self._halted(kb):
                thread = threading.Thread(
                    target=self._build, args=(kb, generation, db), daemon=True,
                    name=f"citewise-impacts-{kb}",
                )  # fmt: skip
                self._building[key] = thread
                thread.start()
            return None

    def _build(self, kb: str, generation: str, db: Path) -> None:
        key = (kb, generation)
        try:
            built = self._read(key, generation, db)
        finally:
            with self._lock:
                self._building.pop(key, None)
                abandoned = key in self._abandoned
                self._abandoned.discard(key)
        # The build's own arrays and rows are freed: give them back (its thread's arena).
        release_free_memory()
        if built is None or abandoned:
            return
        with self._lock:
            current = self._by_kb.get(kb)
            if not self._halted(kb) and (current is None or current.generation != generation):
                self._by_kb[kb] = built

    def _read(self, key: tuple[str, str], generation: str, db: Path) -> ImpactIndex | None:
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)
        except sqlite3.Error:
            return None  # FTS5 keeps answering; the next generation tries again
        with self._lock:
            if self._halted(key[0]):
                conn.close()
                return None
            self._reading[key] = conn
        try:
            # One read transaction: the matrix is of the generation it read, or none.
            conn.execute("BEGIN")
            if text_generation(conn) != generation:
                return None
            index = build(conn, generation)
            conn.execute("ROLLBACK")
        except (sqlite3.Error, OSError, ValueError):  # interrupted by close(), or gone
            return None
        finally:
            with self._lock:
                self._reading.pop(key, None)
            conn.close()
        with self._lock:
            if self._halted(key[0]) or key in self._abandoned:
                return None
        try:
            _save(index, folder(db) / generation)
        except OSError:
            pass  # a read-only or full disk, or the file was removed: searched from memory
        return index

    def drop(self, kb: str) -> None:
        """Forget ``kb``'s matrix and stop its builds (it is being closed or deleted)."""
        self._stop(kb)

    def close(self) -> None:
        """Stop every build still running (its read is interrupted) and wait for it."""
        self._stop(None)

    def _stop(self, kb: str | None) -> None:
        with self._lock:
            self._stopping.append(kb)  # no build starts, none is kept, none saves from here
            if kb is None:
                self._by_kb.clear()
            else:
                self._by_kb.pop(kb, None)
            # A store collected by a build thread's own garbage collection is closed from
            # that thread (its finalizer): it stops on seeing ``_stopping``, never joins itself.
            me = threading.current_thread()
            threads = []
            for key, thread in self._building.items():
                if kb in (None, key[0]):
                    if thread is me:
                        self._abandoned.add(key)
                    else:
                        threads.append(thread)
            for (name, _), conn in self._reading.items():
                if kb in (None, name):
                    conn.interrupt()
        try:
            for thread in threads:
                thread.join()
        finally:
            with self._lock:
                self._stopping.remove(kb)  # a store may be used again after close()

    def _halted(self, kb: str) -> bool:
        return any(stopped in (None, kb) for stopped in self._stopping)


def impact_rows(
    index: ImpactIndex, conn: sqlite3.Connection, terms: list[str], k: int
) -> list[sqlite3.Row] | None:
    """Rows of ``score`` and the chunk columns, as ``keyword_rows``; None: ask FTS5."""
    if k > MAX_K:
        return None
    single = []
    for split in tokens(terms):
        if len(split) != 1:
            return None  # FTS5 reads "a b" as a phrase
        single.append(split[0])
    return scored_rows(conn, index.top(single, k))


def scored_rows(conn: sqlite3.Connection, found: list[tuple[int, float]]) -> list[sqlite3.Row]:
    """Rows of ``score`` and the chunk columns for (rid, score) pairs, in their order."""
    if not found:
        return []
    # Bound as parameters (not JSON text), so each score reaches the row bit for bit.
    values = ", ".join(["(?, ?, ?)"] * len(found))
    params = [x for n, (rid, score) in enumerate(found) for x in (n, rid, score)]
    return list(
        conn.execute(
            f"WITH t(n, rid, score) AS (VALUES {values}) "
            f"SELECT t.score AS score, {C_CHUNK_COLUMNS} "
            "FROM t JOIN chunks c ON c.rid = t.rid ORDER BY t.n",
            params,
        ).fetchall()
    )
