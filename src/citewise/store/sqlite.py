"""The default store: a SQLite file per knowledge base, FTS5 for BM25, exact numpy dense search."""

from __future__ import annotations

import json
import logging
import sqlite3
import stat
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote

from citewise.errors import (
    ConfigurationError,
    KnowledgeBaseError,
    StorageError,
    StoreUnavailableError,
)
from citewise.models import Chunk, Document, SearchFilter
from citewise.store import (
    ann,
    doc_metadata,
    sqlite_deferred,
    sqlite_generations,
    sqlite_impact,
    sqlite_keyword,
)
from citewise.store.availability import is_sqlite_unavailable, store_timeout
from citewise.store.base import DocumentUpdate
from citewise.store.checks import KB_NAME, check_meta, check_name, check_updates, unknown_kb
from citewise.store.columns import chunk_from_values, chunk_values
from citewise.store.dense import DenseIndex, as_windows
from citewise.store.locking import kb_write_lock
from citewise.store.sqlite_dense import read_dense
from citewise.store.sqlite_impact import ImpactCache, ImpactIndex
from citewise.store.sqlite_keyword import keyword_rows
from citewise.store.sqlite_schema import (
    CHUNK_COLUMNS,
    DIM_KEY,
    GENERATION_KEY,
    SCHEMA_VERSION,
    bump_text_generation,
    create_database,
    fts_query,
    insert_vectors,
    is_storage_failure,
    row_to_chunk,
    text_generation,
    upsert_chunks,
    write_rows,
)

if TYPE_CHECKING:
    from citewise.embedding.base import Vectors

log = logging.getLogger(__name__)

__all__ = ["SQLiteKB", "SQLiteStore", "fts_query", "from_url"]


def from_url(url: str, home: Path) -> SQLiteStore:
    """The store a ``sqlite://`` URL names: ``sqlite:///abs/folder``, or a folder under ``home``.

    ``sqlite://`` alone is the default folder, ``home / "kb"``. One option:
    ``?ann_threshold=N``, the window count from which dense search is approximate (0: never;
    see ``store/ann.py``).
    """
    _, sep, rest = url.partition("://")
    rest, _, query = rest.partition("?")
    options = parse_qs(query, keep_blank_values=True)
    if not sep or "#" in rest or set(options) - {"ann_threshold"}:
        raise ConfigurationError(
            "a SQLite store URL is sqlite:///absolute/folder or sqlite://folder-under-home "
            "(one option: ?ann_threshold=N)"
        )
    folder = Path(unquote(rest)).expanduser() if rest else Path("kb")
    try:
        threshold = ann.ann_threshold(options["ann_threshold"][-1] if options else None)
    except ValueError as error:
        raise ConfigurationError(str(error)) from None
    return SQLiteStore(Path(home) / folder, ann_threshold=threshold)


class SQLiteStore:
    """Knowledge bases as SQLite files ``root/{kb}.sqlite`` (WAL mode).

    A knowledge base exists once ``create`` made it; nothing else creates a file (a read or
    write of an unknown or dropped one raises KnowledgeBaseError). Each thread gets its own
    connection per knowledge base; WAL lets reads proceed during a write and see the state
    before it until it commits.
    """

    def __init__(
        self,
        root: Path,
        *,
        ann_threshold: int | None = None,
        impacts_in_background: bool = True,
        private: bool = False,
    ) -> None:
        self.root = Path(root)
        # A rebuild's staging store: its files are opened by this store alone until switched
        # in whole, and a failed build is discarded, so they are written without the WAL
        # (each page once, not into the WAL then again into the file) and unsynced;
        # sqlite_generations.finish turns them back into WAL files synced to disk.
        self.private = private
        self._lock = threading.Lock()
        # (thread, kb) → the connection, the (device, inode) of the file it opened and that
        # file's real path (a rebuilt knowledge base is a link to its generation's file).
        self._conns: dict[tuple[int, str], tuple[sqlite3.Connection, tuple[int, int], Path]] = {}
        self._dense: dict[str, DenseIndex | ann.AnnIndex] = {}
        # Keyword search's BM25 matrix, per generation; built beside the searches (FTS5
        # answering meanwhile) unless ``impacts_in_background`` is False.
        self._impacts = ImpactCache(background=impacts_in_background)
        # Windows from which dense search goes through the ANN index (0: never).
        self.ann_threshold = ann.ann_threshold() if ann_threshold is None else ann_threshold
        self._ann_lock = threading.Lock()

    # -- the engine ------------------------------------------------------------------------

    def open(self, kb: str) -> SQLiteKB:
        if not self.exists(kb):
            raise self._unknown(kb)
        return SQLiteKB(self, kb)

    def create(self, kb: str, meta: Mapping[str, str] | None = None) -> SQLiteKB:
        """Create an empty knowledge base (no-op if it exists), merge ``meta`` into it, open it."""
        check_meta(meta)
        path = self._path(kb)
        if not path.exists():
            create_database(path)
        handle = SQLiteKB(self, kb)
        if meta:
            handle.apply(meta=meta)
        return handle

    @contextmanager
    def rebuild(self, kb: str, meta: Mapping[str, str] | None = None) -> Iterator[SQLiteKB]:
        """A new, empty ``kb`` in a file of its own beside the current one (if any); when the
        block ends without an error, the finished file takes the current one's place in one
        rename (see ``store/sqlite_generations.py``). The caller holds ``write_lock(kb)``."""
        check_meta(meta)
        path = self._path(kb)
        sqlite_generations.remove_stale(self.root, kb, path)
        folder = sqlite_generations.new_folder(self.root, kb)
        staging = SQLiteStore(folder, ann_threshold=0, private=True)
        db = staging._path(kb)
        existed = self.exists(kb)
        try:
            try:
                handle = staging.create(kb, meta)
            except StorageError as error:
                kept = "what was stored before is intact" if existed else "nothing was left behind"
                raise StorageError(f"{error}; {kept}") from error
            yield handle
            staging.close()
            sqlite_generations.finish(sqlite3.connect(db, isolation_level=None), db, kb)
            sqlite_generations.switch(self.root, kb, path, db)
        except BaseException:
            staging.close()
            sqlite_generations.discard(self.root, kb, folder)
            raise
        self._close_kb(kb)
        # The staging store writes without an ANN index: the switched-in file gets its own.
        self._warm_ann(kb)

    def exists(self, kb: str) -> bool:
        return self._path(kb).is_file()

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(
            p.stem for p in self.root.glob("*.sqlite") if p.is_file() and KB_NAME.fullmatch(p.stem)
        )

    def drop(self, kb: str) -> None:
        path = self._path(kb)
        if not path.is_file():
            raise self._unknown(kb)
        self._close_kb(kb)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        ann.remove_files(path)
        sqlite_impact.remove_files(path)
        sqlite_generations.remove_all(self.root, kb)

    def write_lock(self, kb: str) -> AbstractContextManager[None]:
        return kb_write_lock(self.root, check_name(kb))

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        self._impacts.close()  # first: no background build reads or writes after this
        with self._lock:
            conns, self._conns = list(self._conns.values()), {}
            self._dense.clear()
        for conn, _, _ in conns:
            conn.close()

    # -- connections and transactions ------------------------------------------------------

    def _path(self, kb: str) -> Path:
        return self.root / f"{check_name(kb)}.sqlite"

    def _unknown(self, kb: str) -> KnowledgeBaseError:
        return unknown_kb(kb, self.names())

    def _close_kb(self, kb: str) -> None:
        with self._lock:
            keys = [key for key in self._conns if key[1] == kb]
            conns = [self._conns.pop(key)[0] for key in keys]
            self._dense.pop(kb, None)
        self._impacts.drop(kb)
        for conn in conns:
            conn.close()

    def _conn(self, kb: str) -> sqlite3.Connection:
        path = self._path(kb)
        key = (threading.get_ident(), kb)
        try:
            st = path.stat()
            file_id = (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None
        except FileNotFoundError:
            file_id = None
        cached = self._conns.get(key)
        if cached is not None:
            if cached[1] == file_id:
                return cached[0]
            # The file was dropped (maybe re-created) since, perhaps by another process: the
            # open connection still reads the deleted file, so let it go.
            with self._lock:
                self._conns.pop(key, None)
                self._dense.pop(kb, None)
            cached[0].close()
        if file_id is None:
            raise self._unknown(kb)
        # mode=rw: opening must never create an empty file for a mistyped name.
        # check_same_thread=False only so close() can close it from another thread.
        opened = path.resolve()
        # A read waits for a lock at most the store's deadline (then 503, not a hang);
        # a write waits longer (_write).
        conn = sqlite3.connect(
            f"{opened.as_uri()}?mode=rw",
            uri=True,
            isolation_level=None,
            timeout=store_timeout(),
            check_same_thread=False,
        )
        conn.row_factory = sqlite3.Row
        try:
            if self.private:
                conn.execute("PRAGMA journal_mode=MEMORY")
                conn.execute("PRAGMA synchronous=OFF")
            else:
                conn.execute("PRAGMA synchronous=NORMAL")
            _check_schema(conn, kb)
        except KnowledgeBaseError:
            conn.close()
            raise
        except sqlite3.Error as error:
            conn.close()
            if not is_storage_failure(error):
                _raise_if_unavailable(kb, error)
                raise
            # Opening a WAL file writes its shared-memory index beside it.
            raise StorageError(
                f"knowledge base {kb!r} cannot be opened ({error}: is the disk full?)"
            ) from error
        sqlite_keyword.install(conn, kb, _record_schema_version)
        doc_metadata.install(conn, kb, _record_schema_version)
        with self._lock:
            self._conns[key] = (conn, file_id, opened)
        return conn

    @contextmanager
    def _write(self, kb: str, *, text: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction; ``text``: it may change chunk text (all but vector fills)."""
        conn = self._conn(kb)
        # Writers take turns (another process indexing): wait as long as before for the lock.
        conn.execute(f"PRAGMA busy_timeout = {_WRITE_BUSY_MS}")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            _raise_if_unavailable(kb, error)
            raise
        finally:
            conn.execute(f"PRAGMA busy_timeout = {round(store_timeout() * 1000)}")
        try:
            yield conn
            # Bumped in the same transaction, so a cached dense matrix is stale exactly when
            # the data it was built from changed (in this process or any other).
            conn.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ?",
                (GENERATION_KEY,),
            )
            if text:
                bump_text_generation(conn)
            conn.execute("COMMIT")
        except BaseException as error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error) and is_storage_failure(error):
                raise StorageError(
                    f"knowledge base {kb!r} could not be written ({error}: is the disk "
                    "full?); nothing was written, what was stored before is intact"
                ) from error
            if isinstance(error, sqlite3.Error):
                _raise_if_unavailable(kb, error)
            raise

    @contextmanager
    def _read(self, kb: str) -> Iterator[sqlite3.Connection]:
        conn = self._conn(kb)
        # One read transaction: every statement inside sees the same snapshot.
        conn.execute("BEGIN")
        try:
            yield conn
        except sqlite3.Error as error:
            _raise_if_unavailable(kb, error)
            raise
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    # -- writes ----------------------------------------------------------------------------

    def _apply(
        self,
        kb: str,
        updates: Sequence[DocumentUpdate],
        removed_doc_ids: Sequence[str],
        meta: Mapping[str, str] | None,
        *,
        vectors_later: bool = False,
    ) -> None:
        check_meta(meta)
        with self._write(kb) as conn:
            stored = {row[0] for row in conn.execute("SELECT chunk_id FROM chunks")}
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (DIM_KEY,)).fetchone()
            dim = int(row[0]) if row else None
            dim = check_updates(updates, stored, dim, vectors_later=vectors_later)
            self._apply_updates(conn, updates, stored, dim)
            for doc_id in removed_doc_ids:
                conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
                conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
            conn.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [(k, str(v)) for k, v in (meta or {}).items()],
            )
            # Chunks still waiting for vectors (sqlite_deferred.py): deleting some, or
            # writing more, changes how many.
            incomplete = vectors_later or sqlite_deferred.missing(conn)
            if incomplete:
                incomplete = sqlite_deferred.recount(conn)
        if not incomplete:  # the ANN index is built for complete generations only
            self._warm_ann(kb)

    def _fill_vectors(self, kb: str, vectors: Mapping[str, Vectors]) -> int:
        # Vectors only: the keyword matrix of the text stays current (no rebuild per batch).
        with self._write(kb, text=False) as conn:
            remaining = sqlite_deferred.fill(conn, vectors)
        if not remaining:
            self._warm_ann(kb)
        return remaining

    def _warm_ann(self, kb: str) -> None:
        """Bring a large knowledge base's ANN index up to the write just committed, here in the
        writer, so the first search after an ingest opens a saved index instead of building it
        (seconds at 100k windows: benchmarks/first-answer.md). Failing here fails no write: the
        next search builds it as before."""
        if not self.ann_threshold:
            return
        try:
            with self._read(kb) as conn:
                gen = conn.execute(
                    "SELECT value FROM meta WHERE key = ?", (GENERATION_KEY,)
                ).fetchone()[0]
                # Only the ANN path: a small knowledge base's exact matrix is not loaded here.
                approximate = self._ann_index(kb, conn, gen)
                if approximate is not None:
                    with self._lock:
                        self._dense[kb] = approximate
        except Exception as error:  # the write is committed; search retries the build
            log.warning("could not update the ANN index of %r after a write (%s)", kb, error)

    def _apply_updates(
        self,
        conn: sqlite3.Connection,
        updates: Sequence[DocumentUpdate],
        stored: set[str],
        dim: int | None,
    ) -> None:
        """Write every document of ``updates``: a few statements for all of them, not a few
        per document (a build of 5,000 documents spent a tenth of its apply starting them)."""
        if not updates:
            return
        conn.executemany(
            "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (d.doc_id, d.title, d.url, d.page, d.content_hash, d.scope,
                 doc_metadata.metadata_json(d.metadata))
                for d in (u.document for u in updates)
            ],
        )  # fmt: skip
        # Triggers drop the deleted chunks' BM25 entries and vectors (sqlite_schema.py). A
        # chunk id names its document, so a kept id is kept where it is. Nothing to drop in
        # an empty knowledge base (a build): no list of every chunk id sent for nothing.
        if stored:
            conn.execute(
                "DELETE FROM chunks WHERE doc_id IN (SELECT value FROM json_each(?)) "
                "AND chunk_id NOT IN (SELECT value FROM json_each(?))",
                (
                    json.dumps([u.document.doc_id for u in updates]),
                    json.dumps([c.chunk_id for u in updates for c in u.chunks]),
                ),
            )
        # A stored chunk keeps its vectors; its other fields (url, title, ...) are refreshed.
        # Many chunks a statement (see sqlite_schema.upsert_chunks).
        rows = [chunk_values(c) for u in updates for c in u.chunks]
        write_rows(conn, upsert_chunks, rows, _CHUNKS_PER_STATEMENT)
        new = {c.chunk_id for u in updates for c in u.chunks} - stored
        vectors = {c: v for u in updates for c, v in u.vectors.items() if c in new}
        self._insert_vectors(conn, vectors, dim)

    def _insert_vectors(
        self, conn: sqlite3.Connection, vectors: Mapping[str, Vectors], dim: int | None
    ) -> None:
        if not vectors:
            return
        # No vector to replace when there are none (a build): no statement per chunk.
        if conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is not None:
            conn.executemany("DELETE FROM vectors WHERE chunk_id = ?", [(c,) for c in vectors])
        # Many windows a statement, as the chunks (a fifth less than a statement per window).
        rows = [
            (chunk_id, i, w.tobytes())
            for chunk_id, v in vectors.items()
            for i, w in enumerate(as_windows(v))
        ]
        write_rows(conn, insert_vectors, rows, _VECTORS_PER_STATEMENT)
        conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (DIM_KEY, str(dim)))

    def _impacts_for(self, kb: str, conn: sqlite3.Connection) -> ImpactIndex | None:
        # Saved beside the file this connection reads (each generation has its own).
        opened = self._conns[(threading.get_ident(), kb)][2]
        return self._impacts.index(kb, conn, text_generation(conn), opened)

    # -- the dense matrix ------------------------------------------------------------------

    def _dense_index(self, kb: str, conn: sqlite3.Connection) -> DenseIndex | ann.AnnIndex | None:
        gen = conn.execute("SELECT value FROM meta WHERE key = ?", (GENERATION_KEY,)).fetchone()[0]
        cached = self._dense.get(kb)
        if cached is not None and cached.generation == gen:
            return cached
        approximate = self._ann_index(kb, conn, gen)
        if approximate is not None:
            with self._lock:
                self._dense[kb] = approximate
            return approximate
        index = read_dense(conn, gen)
        if index is None:
            return None
        with self._lock:
            self._dense[kb] = index
        return index

    def _ann_index(self, kb: str, conn: sqlite3.Connection, gen: str) -> ann.AnnIndex | None:
        if not self.ann_threshold:
            return None
        # The index lives beside the file this connection reads (each generation has its own).
        opened = self._conns[(threading.get_ident(), kb)][2]
        with self._ann_lock:
            return ann.open_if_large(opened, conn, gen, self.ann_threshold, lambda: self._conn(kb))


# Chunks written per statement: their text is held twice at most this many at a time (the
# rows and the statement's copy), and FTS5 flushes its pending terms once per statement,
# about when its 1 MB hash would anyway.
_CHUNKS_PER_STATEMENT = 1000
# Window vectors per statement (1,500 parameters, within every SQLite's limit but the
# oldest's 999, which write_rows honours).
_VECTORS_PER_STATEMENT = 500
# How long a write waits for another writer's lock before the store is called unavailable.
_WRITE_BUSY_MS = 30_000


def _raise_if_unavailable(kb: str, error: sqlite3.Error) -> None:
    """Raise StoreUnavailableError for a knowledge base file that is locked or damaged."""
    kind = is_sqlite_unavailable(error)
    if kind == "locked":
        raise StoreUnavailableError(
            f"knowledge base {kb!r} is locked by another process ({error}); nothing was read "
            "or written, try again shortly"
        ) from error
    if kind == "damaged":
        raise StoreUnavailableError(
            f"knowledge base {kb!r} is damaged ({error}): restore its file or rebuild it "
            f"(citewise index … --kb {kb} --rebuild)"
        ) from error


def _check_schema(conn: sqlite3.Connection, kb: str) -> None:
    """Refuse a file written by a newer citewise: reading it could misread or damage it.
    (Older files are upgraded in place, transactionally, by ``sqlite_keyword.install``.)"""
    row = conn.execute("SELECT value FROM meta WHERE key = '_schema'").fetchone()
    found = int(row[0]) if row is not None and str(row[0]).isdigit() else 1
    if found > int(SCHEMA_VERSION):
        raise KnowledgeBaseError(
            f"knowledge base {kb!r} was written by a newer citewise (schema {found}; this "
            f"version reads schema {SCHEMA_VERSION} and older): upgrade citewise to use it"
        )


def _record_schema_version(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('_schema', ?)", (SCHEMA_VERSION,))


class SQLiteKB:
    """A handle on one knowledge base of a :class:`SQLiteStore` (see ``KBStore``)."""

    def __init__(self, store: SQLiteStore, name: str) -> None:
        self.store = store
        self.name = name

    def __repr__(self) -> str:
        return f"SQLiteKB({self.name!r}, root={str(self.store.root)!r})"

    def apply(
        self,
        updates: Sequence[DocumentUpdate] = (),
        removed_doc_ids: Sequence[str] = (),
        meta: Mapping[str, str] | None = None,
        *,
        vectors_later: bool = False,
    ) -> None:
        """See ``KBStore.apply``; with ``vectors_later`` new chunks may come without vectors
        (keyword search finds them at once; see :meth:`fill_vectors`)."""
        self.store._apply(self.name, updates, removed_doc_ids, meta, vectors_later=vectors_later)

    def without_vectors(self, limit: int) -> list[Chunk]:
        """Up to ``limit`` stored chunks that have no vectors yet, in storage order."""
        with self.store._read(self.name) as conn:
            return [row_to_chunk(row) for row in sqlite_deferred.without_vectors(conn, limit)]

    def fill_vectors(self, vectors: Mapping[str, Vectors]) -> int:
        """Store vectors for chunks still without them, in one transaction; returns how
        many chunks still have none (ids unknown or already filled are ignored)."""
        return self.store._fill_vectors(self.name, vectors)

    def vectors_missing(self) -> int:
        """How many stored chunks have no vectors yet (0 for a complete knowledge base)."""
        with self.store._read(self.name) as conn:
            return sqlite_deferred.missing(conn)

    def dense(
        self, vector: Vectors, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        with self.store._read(self.name) as conn:
            index = self.store._dense_index(self.name, conn)
            if index is None:
                return []
            found = index.search(vector, k, filter, self.name)
            rows = conn.execute(
                f"SELECT rid, {CHUNK_COLUMNS} FROM chunks "
                "WHERE rid IN (SELECT value FROM json_each(?))",
                (json.dumps([rid for rid, _ in found]),),
            )
            chunks = {row["rid"]: row_to_chunk(row) for row in rows}
        return [(chunks[rid], score) for rid, score in found]

    def keyword(
        self, text: str, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        # Words, CJK bigrams and whole identifiers: see store/sqlite_keyword.py.
        with self.store._read(self.name) as conn:
            impacts = lambda: self.store._impacts_for(self.name, conn)  # noqa: E731
            rows = keyword_rows(conn, text, k, filter, impacts)
            # By position (score, then the chunk's columns), not by name: cheaper per hit.
            return [(chunk_from_values(row[1:]), float(row[0])) for row in rows]

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        with self.store._read(self.name) as conn:
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks "
                "WHERE chunk_id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(ids)),),
            )
            found = {row["chunk_id"]: row_to_chunk(row) for row in rows}
        return [found[i] for i in ids if i in found]

    def neighbours(self, chunk_id: str, n: int) -> list[Chunk]:
        with self.store._read(self.name) as conn:
            row = conn.execute(
                "SELECT doc_id, position FROM chunks WHERE chunk_id = ?", (chunk_id,)
            ).fetchone()
            if row is None:
                return []
            doc_id, pos = row
            rows = conn.execute(
                f"""SELECT * FROM (
                    SELECT {CHUNK_COLUMNS} FROM chunks WHERE doc_id = ? AND position < ?
                    ORDER BY position DESC LIMIT ?)
                UNION ALL SELECT * FROM (
                    SELECT {CHUNK_COLUMNS} FROM chunks WHERE doc_id = ? AND position >= ?
                    ORDER BY position LIMIT ?)
                ORDER BY position""",
                (doc_id, pos, max(n, 0), doc_id, pos, max(n, 0) + 1),
            )
            return [row_to_chunk(r) for r in rows]

    def documents(self) -> list[Document]:
        with self.store._read(self.name) as conn:
            rows = conn.execute(
                "SELECT doc_id, title, url, page, content_hash, scope, metadata "
                "FROM documents ORDER BY doc_id"
            )
            return [doc_metadata.document(row) for row in rows]

    def chunk_ids(self) -> set[str]:
        with self.store._read(self.name) as conn:
            return {row[0] for row in conn.execute("SELECT chunk_id FROM chunks")}

    def meta(self) -> dict[str, str]:
        with self.store._read(self.name) as conn:
            rows = conn.execute("SELECT key, value FROM meta WHERE key NOT LIKE '\\_%' ESCAPE '\\'")
            return {row["key"]: row["value"] for row in rows}
