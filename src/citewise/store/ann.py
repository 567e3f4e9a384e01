"""Approximate dense search for large SQLite knowledge bases: an HNSW index beside the file.

Past a size (``ANN_THRESHOLD`` windows, measured in benchmarks/latency.md) exact search reads
the whole float matrix per query. Above it the SQLite store searches a usearch HNSW index of
int8 vectors kept in ``{kb}.sqlite.usearch`` instead, and rescores the candidates exactly with
their float vectors read back from SQLite by rowid: the float matrix is never loaded.

The index is tagged with the store's generation (``{kb}.sqlite.usearch.json``). When the
generation moved, the next search brings it up to date incrementally (windows added and
deleted since) or rebuilds it, and saves it atomically (a temporary file, then
``os.replace``). A window's key is its rowid in ``vectors`` with a fingerprint of its
``(chunk_id, window)`` in the low bits, so a rowid SQLite reuses for another window is a new
key and the stale entry is removed. A missing, corrupt or foreign index file is rebuilt.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import uuid
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from citewise.config import StoreSettings
from citewise.models import SearchFilter
from citewise.store.dense import in_scope
from citewise.store.sqlite_schema import DIM_KEY, filter_sql

if TYPE_CHECKING:
    from citewise.embedding.base import Vectors

__all__ = [
    "ANN_ENV",
    "DEFAULT_THRESHOLD",
    "AnnIndex",
    "ann_available",
    "ann_threshold",
    "open_ann",
]

log = logging.getLogger(__name__)

ANN_ENV = "CITEWISE_ANN_THRESHOLD"
# Windows above which exact search is slower than the ANN path (benchmarks/latency.md).
DEFAULT_THRESHOLD = 100_000
SUFFIX = ".usearch"
FP_BITS = 24
FP_MASK = (1 << FP_BITS) - 1
# HNSW parameters (benchmarks/latency.md, benchmarks/hnsw-1m.json): 16 links and a build list
# of 64 gave recall@10 0.53-0.78 at 1M windows (search list 128-1024); 32 links and a build
# list of 128 give 0.994 at a search list of 128 (1.2 ms) for twice the build time.
# Candidates are rescored exactly.
CONNECTIVITY = 32
EXPANSION_ADD = 128
EXPANSION_SEARCH = 128
BATCH = 20_000
# Windows fetched per chunk wanted, before exact rescoring; grown while a filter rejects them.
OVERFETCH = 4
MIN_CANDIDATES = 100
MAX_CANDIDATES = 8192


def _usearch() -> Any:
    """usearch's Index class, imported after onnxruntime: usearch 2.26's compiled module loaded
    first makes the later import of onnxruntime (the embedders') crash the process."""
    with contextlib.suppress(ImportError):
        import onnxruntime  # noqa: F401
    from usearch.index import Index

    return Index


def ann_available() -> bool:
    try:
        _usearch()
    except ImportError:
        return False
    return True


def ann_threshold(option: str | None = None) -> int:
    """The window count above which search is approximate: the store URL's ``ann_threshold``,
    else ``CITEWISE_ANN_THRESHOLD``, else the measured default. 0 turns the ANN path off."""
    raw = option if option is not None else StoreSettings.from_env().ann_threshold
    if raw is None or raw == "":
        return DEFAULT_THRESHOLD
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"ann_threshold must be a whole number of windows, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"ann_threshold must be 0 (off) or more, got {value}")
    return value


def _fingerprint(chunk_id: str, window: int) -> int:
    return zlib.crc32(f"{chunk_id}\0{window}".encode()) & FP_MASK


def _key(rowid: int, chunk_id: str, window: int) -> int:
    return (rowid << FP_BITS) | _fingerprint(chunk_id, window)


def _keys(rows: Iterable[tuple[int, str, int]]) -> npt.NDArray[np.uint64]:
    return np.fromiter((_key(r, c, w) for r, c, w in rows), dtype=np.uint64)


def _table_keys(conn: sqlite3.Connection) -> npt.NDArray[np.uint64]:
    return _keys(conn.execute("SELECT rowid, chunk_id, window FROM vectors"))


def _passes(f: SearchFilter | None, scope: str, page: str, doc_id: str) -> bool:
    return f is None or (
        (f.scope is None or in_scope(scope, f.scope))
        and (not f.page_prefix or page.startswith(f.page_prefix))
        and (f.doc_ids is None or doc_id in f.doc_ids)
    )


def _top(scores: dict[int, float], k: int) -> list[tuple[int, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


@dataclass
class AnnIndex:
    """The approximate index of one knowledge base at one generation (``DenseIndex``'s contract).

    ``connect`` gives the calling thread's connection, inside the read transaction the
    search runs in, so the rescoring reads the same snapshot the index was checked against.
    """

    generation: str
    index: Any  # usearch.index.Index, memory-mapped read-only
    dim: int
    connect: Callable[[], sqlite3.Connection]

    def search(
        self, vector: Vectors, k: int, f: SearchFilter | None, kb: str
    ) -> list[tuple[int, float]]:
        """``(rid, cosine)`` of (about) the k chunks whose best window is nearest, best first."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if k <= 0:
            return []
        if query.shape[0] != self.dim:
            raise ValueError(f"query vector has dim {query.shape[0]}, {kb!r} has {self.dim}")
        conn = self.connect()
        if f is not None and f.doc_ids is not None and len(f.doc_ids) <= 1000:
            # A few documents: their windows are few, so exact is cheaper than over-fetching.
            return exact_filtered(conn, query, k, f)
        size = len(self.index)
        if size == 0:
            return []
        wanted = max(MIN_CANDIDATES, OVERFETCH * k)
        while True:
            count = min(wanted, size)
            # A small index is scanned whole (cheaper than walking the graph at that size).
            matches = self.index.search(query, count, threads=1, exact=size <= MAX_CANDIDATES)
            scores = self._rescore(conn, query, np.asarray(matches.keys, dtype=np.uint64), f)
            if len(scores) >= k or count >= size:
                return _top(scores, k)
            if wanted >= MAX_CANDIDATES:
                # A selective filter: the few chunks it keeps are cheaper to score exactly.
                return exact_filtered(conn, query, k, f)
            wanted *= 4

    def _rescore(
        self,
        conn: sqlite3.Connection,
        query: npt.NDArray[np.float32],
        keys: npt.NDArray[np.uint64],
        f: SearchFilter | None,
    ) -> dict[int, float]:
        if len(keys) == 0:
            return {}
        wanted = {int(key >> FP_BITS): int(key) for key in keys}
        rows = conn.execute(
            "SELECT v.rowid, v.chunk_id, v.window, v.vector, c.rid, c.scope, c.page, c.doc_id "
            "FROM vectors v JOIN chunks c ON c.chunk_id = v.chunk_id "
            "WHERE v.rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(list(wanted)),),
        ).fetchall()
        # Rows whose window changed since the index was saved (a reused rowid) are skipped.
        rows = [
            r
            for r in rows
            if _key(r[0], r[1], r[2]) == wanted.get(r[0]) and _passes(f, r[5], r[6], r[7])
        ]
        if not rows:
            return {}
        matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32)
        exact = matrix.reshape(len(rows), -1) @ query
        best: dict[int, float] = {}
        for r, score in zip(rows, exact.tolist(), strict=True):
            if score > best.get(r[4], -np.inf):
                best[r[4]] = score
        return best


def exact_filtered(
    conn: sqlite3.Connection, query: npt.NDArray[np.float32], k: int, f: SearchFilter | None
) -> list[tuple[int, float]]:
    """Exact search over only the windows of chunks that pass ``f`` (read from SQLite)."""
    where, params = filter_sql(f)
    best: dict[int, float] = {}
    cursor = conn.execute(
        "SELECT c.rid, v.vector FROM vectors v JOIN chunks c ON c.chunk_id = v.chunk_id"
        + (f" WHERE {' AND '.join(where)}" if where else ""),
        params,
    )
    while batch := cursor.fetchmany(BATCH):
        scores = np.frombuffer(b"".join(r[1] for r in batch), dtype=np.float32)
        exact = scores.reshape(len(batch), -1) @ query
        for (rid, _), score in zip(batch, exact.tolist(), strict=True):
            if score > best.get(rid, -np.inf):
                best[rid] = score
    return _top(best, k)


# -- the file --------------------------------------------------------------------------------


def index_path(db: Path) -> Path:
    return Path(f"{db}{SUFFIX}")


def _tag_path(db: Path) -> Path:
    return Path(f"{db}{SUFFIX}.json")


def _read_tag(db: Path) -> dict[str, Any]:
    try:
        tag = json.loads(_tag_path(db).read_text())
        st = index_path(db).stat()
    except (OSError, ValueError):
        return {}
    # The tag describes this very file (a concurrent writer may have replaced one of the two).
    if not isinstance(tag, dict) or tag.get("file") != _identity(st):
        return {}
    return tag


def _identity(st: os.stat_result) -> list[int]:
    """What tells one saved index file from another (a freed inode can be reused)."""
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _new_index(dim: int) -> Any:
    return _usearch()(
        ndim=dim,
        # Vectors are L2-normalised: inner product is cosine, and quicker on int8.
        metric="ip",
        dtype="i8",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def _load(path: Path, dim: int, *, view: bool) -> Any | None:
    """The index saved at ``path``, or None if it is missing, unreadable or of another shape."""
    try:
        index: Any = _usearch().restore(str(path), view=view)
    except Exception as error:  # usearch raises RuntimeError/ValueError on damaged files
        if path.exists():
            log.warning("ANN index %s is unreadable (%s): rebuilding it", path, error)
        return None
    if index is None or index.ndim != dim:
        return None
    index.expansion_search = EXPANSION_SEARCH
    return index


def _rebuild(conn: sqlite3.Connection, dim: int) -> Any:
    index = _new_index(dim)
    cursor = conn.execute("SELECT rowid, chunk_id, window, vector FROM vectors")
    while batch := cursor.fetchmany(BATCH):
        keys = _keys((r[0], r[1], r[2]) for r in batch)
        vectors = np.frombuffer(b"".join(r[3] for r in batch), dtype=np.float32)
        index.add(keys, vectors.reshape(len(batch), dim), threads=0)
    return index


def _update(conn: sqlite3.Connection, index: Any, dim: int) -> Any:
    """Bring ``index`` to the table's windows; a rebuild when most of them changed."""
    table = _table_keys(conn)
    held = np.asarray(index.keys, dtype=np.uint64)
    gone = np.setdiff1d(held, table, assume_unique=True)
    new = np.setdiff1d(table, held, assume_unique=True)
    if len(gone) + len(new) > max(len(table), 1) // 2:
        return _rebuild(conn, dim)
    if len(gone):
        index.remove(gone)
    for i in range(0, len(new), BATCH):
        part = new[i : i + BATCH]
        rowids = (part >> np.uint64(FP_BITS)).tolist()
        rows = conn.execute(
            "SELECT rowid, chunk_id, window, vector FROM vectors "
            "WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(rowids),),
        ).fetchall()
        vectors = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32)
        index.add(_keys((r[0], r[1], r[2]) for r in rows), vectors.reshape(len(rows), dim))
    return index


def _save(db: Path, index: Any, generation: str) -> bool:
    path = index_path(db)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tag_tmp = tmp.with_suffix(".json")
    try:
        index.save(str(tmp))
        # The file is described before it is renamed into place (a rename keeps its inode):
        # described after, it might be another process's file renamed over it meanwhile,
        # tagged then with this process's generation.
        tag = {"generation": generation, "file": _identity(tmp.stat())}
        os.replace(tmp, path)
        tag_tmp.write_text(json.dumps(tag))
        os.replace(tag_tmp, _tag_path(db))
        return True
    except OSError as error:
        # A read-only folder or a full disk: search still works from memory this time.
        log.warning("could not save the ANN index %s (%s)", path, error)
        return False
    finally:
        tmp.unlink(missing_ok=True)
        tag_tmp.unlink(missing_ok=True)


def open_ann(
    db: Path,
    conn: sqlite3.Connection,
    generation: str,
    dim: int,
    connect: Callable[[], sqlite3.Connection],
) -> AnnIndex:
    """The ANN index of the knowledge base in ``db`` at ``generation``, updated if stale."""
    if _read_tag(db).get("generation") == generation:
        index = _load(index_path(db), dim, view=True)
        if index is not None:
            return AnnIndex(generation, index, dim, connect)
    held = _load(index_path(db), dim, view=False)
    if held is None:
        log.info("building the ANN index of %s", db.name)
        index = _rebuild(conn, dim)
    else:
        index = _update(conn, held, dim)
    saved = _save(db, index, generation)
    # Searched from the memory-mapped file: resident memory is the pages a search touches.
    mapped = _load(index_path(db), dim, view=True) if saved else None
    return AnnIndex(generation, mapped if mapped is not None else index, dim, connect)


_missing_logged: set[str] = set()


def open_if_large(
    db: Path,
    conn: sqlite3.Connection,
    generation: str,
    threshold: int,
    connect: Callable[[], sqlite3.Connection],
) -> AnnIndex | None:
    """The ANN index when the knowledge base in ``db`` has ``threshold`` windows or more and
    usearch is installed; None for exact search."""
    windows = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    if windows < threshold:
        return None
    if not ann_available():
        if str(db) not in _missing_logged:
            _missing_logged.add(str(db))
            log.warning(
                "%s has %d windows (ANN threshold %d) but usearch is not installed: exact "
                "dense search (pip install 'citewise[ann]')",
                db.name, windows, threshold,
            )  # fmt: skip
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (DIM_KEY,)).fetchone()
    return open_ann(db, conn, generation, int(row[0]), connect)


def remove_files(db: Path) -> None:
    """Delete the ANN index files of the knowledge base in ``db`` (when it is dropped)."""
    index_path(db).unlink(missing_ok=True)
    _tag_path(db).unlink(missing_ok=True)
