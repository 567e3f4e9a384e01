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
numpy files opened memory-mapped), so each generation is built once, by whichever process
asks first; a write makes a new generation, rebuilt in full on its first keyword search.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from citewise.memory import release_free_memory
from citewise.store.sqlite_schema import C_CHUNK_COLUMNS, GENERATION_KEY

__all__ = ["ImpactCache", "ImpactIndex", "build", "load_or_build", "remove_files", "tokens"]

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # fts5_aux.c: "if( idf<=0.0 ) idf = 1e-6;"
MAX_K = 10_000  # three bound parameters a row, under SQLite's 32766
TOKENIZER = "porter unicode61 remove_diacritics 2"  # chunks_fts's, see sqlite_schema.SCHEMA


@dataclass(frozen=True)
class ImpactIndex:
    """One generation's postings: row ``terms[t]`` spans ``indptr[t]:indptr[t + 1]``."""

    generation: str
    terms: dict[str, int]
    indptr: npt.NDArray[np.int64]
    positions: npt.NDArray[np.int32]  # into ``rids``
    impacts: npt.NDArray[np.float64]
    rids: npt.NDArray[np.int64]

    def top(self, terms: list[str], k: int) -> list[tuple[int, float]]:
        """The ``k`` best (rid, score) for an OR of single-token terms; ties by rid."""
        rows = [self.terms[t] for t in terms if t in self.terms]
        if not rows or k <= 0:
            return []
        pos = np.concatenate([self.positions[self.indptr[r] : self.indptr[r + 1]] for r in rows])
        val = np.concatenate([self.impacts[self.indptr[r] : self.indptr[r + 1]] for r in rows])
        # bincount adds each chunk's postings in query order, from 0.0, as FTS5 adds its
        # phrases' scores: the sums are FTS5's bit for bit, not just to rounding.
        if len(rows) == 1:
            cand, scores = pos, val
        elif len(pos) * 8 >= len(self.rids):  # dense enough: one pass over all chunks
            dense = np.bincount(pos, weights=val, minlength=len(self.rids))
            cand = np.flatnonzero(dense)
            scores = dense[cand]
        else:
            cand, inverse = np.unique(pos, return_inverse=True)
            scores = np.bincount(inverse, weights=val, minlength=len(cand))
        if len(cand) > k:
            # Keep every chunk tied with the k-th score, so the rid tie-break below is exact.
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            keep = scores >= kth
            cand, scores = cand[keep], scores[keep]
        rids = self.rids[cand]
        order = np.lexsort((rids, -scores))[:k]
        return [(int(rids[i]), float(scores[i])) for i in order]


def build(conn: sqlite3.Connection, generation: str) -> ImpactIndex:
    """The impact matrix of ``chunks_fts`` as this connection sees it."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.citewise_fts_instance "
        "USING fts5vocab(main, chunks_fts, instance)"
    )
    # One row per token occurrence, ordered by term then chunk: each run of equal rows is one
    # posting, counted batch by batch, so memory follows the postings, never the occurrences
    # (the whole list of occurrences was the peak of a build: benchmarks/peers.md).
    cur = conn.execute("SELECT term, doc FROM temp.citewise_fts_instance")
    term_ids: dict[str, int] = {}
    t_parts: list[npt.NDArray[np.int32]] = []
    d_parts: list[npt.NDArray[np.int64]] = []
    f_parts: list[npt.NDArray[np.int64]] = []
    while batch := cur.fetchmany(_BATCH):
        t = np.fromiter(
            (term_ids.setdefault(t, len(term_ids)) for t, _ in batch),
            dtype=np.int32,
            count=len(batch),
        )
        d = np.fromiter((d for _, d in batch), dtype=np.int64, count=len(batch))
        del batch
        starts = np.ones(len(t), dtype=bool)
        starts[1:] = (t[1:] != t[:-1]) | (d[1:] != d[:-1])
        at = np.flatnonzero(starts)
        counts = np.diff(np.append(at, len(t)))
        t, d = t[at], d[at]
        if f_parts and t_parts[-1][-1] == t[0] and d_parts[-1][-1] == d[0]:
            f_parts[-1][-1] += counts[0]  # a run the batch boundary cut in two
            t, d, counts = t[1:], d[1:], counts[1:]
        if len(t):  # empty when the whole batch continued the previous run
            t_parts.append(t)
            d_parts.append(d)
            f_parts.append(counts)
    if not t_parts:
        empty = np.zeros(0, dtype=np.int64)
        return ImpactIndex(
            generation, {}, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0), empty
        )
    # The chunks, sorted (np.unique of every posting's chunk, from the parts' few).
    rids = np.unique(np.concatenate([np.unique(part) for part in d_parts]))
    # One list joined at a time, each freed as it is: never all the parts and all the
    # joined arrays at once.
    term_of = np.concatenate(t_parts)
    t_parts.clear()
    doc_of = np.concatenate(d_parts)
    d_parts.clear()
    freq_of = np.concatenate(f_parts)
    f_parts.clear()
    p_term, p_doc, freq = _postings(term_of, doc_of, freq_of)
    del term_of, doc_of, freq_of
    # Each posting's chunk as its position in ``rids`` (what np.unique's inverse gives),
    # found in slices instead of one sort of every posting.
    p_pos = np.empty(len(p_doc), dtype=np.int32)
    for lo in range(0, len(p_doc), _BATCH):
        p_pos[lo : lo + _BATCH] = np.searchsorted(rids, p_doc[lo : lo + _BATCH])
    del p_doc
    # A chunk's length: its token occurrences, all of them in its postings' counts.
    lengths = np.bincount(p_pos, weights=freq, minlength=len(rids))
    n_rows = _row_count(conn, len(rids))
    avgdl = float(lengths.sum()) / n_rows
    df = np.bincount(p_term, minlength=len(term_ids)).astype(np.float64)
    # The C library's log, as FTS5's (numpy's vectorised log may differ in the last bit).
    ratio = (n_rows - df + 0.5) / (df + 0.5)
    idf = np.fromiter((math.log(r) if r > 0 else 0.0 for r in ratio), np.float64, len(ratio))
    idf[idf <= 0.0] = IDF_FLOOR
    impacts = np.empty(len(p_term), dtype=np.float64)
    # The same expression, in the same order, as fts5Bm25Function; in slices, so its
    # temporaries stay small (each element is computed exactly as in one pass).
    for lo in range(0, len(p_term), _BATCH):
        hi = lo + _BATCH
        tf = freq[lo:hi].astype(np.float64)
        impacts[lo:hi] = idf[p_term[lo:hi]] * (
            (tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * lengths[p_pos[lo:hi]] / avgdl))
        )
    indptr = np.zeros(len(term_ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(p_term, minlength=len(term_ids)), out=indptr[1:])
    return ImpactIndex(generation, term_ids, indptr, p_pos, impacts, rids)


_BATCH = 1 << 14


def _postings(
    term: npt.NDArray[np.int32], doc: npt.NDArray[np.int64], freq: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The postings ordered by (term, chunk), each (term, chunk) once with its count. FTS5
    gives them in that order (terms in order get increasing ids), so this only checks; were
    the order ever different, equal pairs are merged and summed here."""
    ordered = (term[1:] > term[:-1]) | ((term[1:] == term[:-1]) & (doc[1:] > doc[:-1]))
    if bool(ordered.all()):
        return term, doc, freq
    order = np.lexsort((doc, term))
    term, doc, freq = term[order], doc[order], freq[order]
    starts = np.ones(len(term), dtype=bool)
    starts[1:] = (term[1:] != term[:-1]) | (doc[1:] != doc[:-1])
    at = np.flatnonzero(starts)
    return term[at], doc[at], np.add.reduceat(freq, at)


def _row_count(conn: sqlite3.Connection, seen: int) -> int:
    """FTS5's N: the rows of its docsize table (a chunk with no tokens counts, too)."""
    row = conn.execute("SELECT count(*) FROM chunks_fts_docsize").fetchone()
    return int(row[0]) if row else seen


_ARRAYS = ("indptr", "positions", "impacts", "rids")


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
        loaded = {name: np.load(target / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
    except (OSError, ValueError):
        return None
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


def tokens(terms: list[str]) -> list[list[str]]:
    """Each term as chunks_fts's tokenizer splits and stems it (a private in-memory table)."""
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute(f"CREATE VIRTUAL TABLE q USING fts5(t, tokenize='{TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, instance)")
        _local.conn = conn
    conn.execute("BEGIN")
    try:
        conn.execute("DELETE FROM q")
        conn.executemany("INSERT INTO q (rowid, t) VALUES (?, ?)", enumerate(terms))
        found: list[list[str]] = [[] for _ in terms]
        for doc, token in conn.execute('SELECT doc, term FROM qv ORDER BY doc, "offset"'):
            found[doc].append(token)
    finally:
        conn.execute("ROLLBACK")  # the table stays empty between calls
    return found


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
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (GENERATION_KEY,)).fetchone()
            if row is None or str(row[0]) != generation:
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
    found = index.top(single, k)
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
