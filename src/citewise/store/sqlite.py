"""The default store: a SQLite file per knowledge base, FTS5 for BM25, exact numpy dense search."""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from citewise.embedding.base import Vectors
from citewise.errors import ConfigurationError, KnowledgeBaseError
from citewise.models import Chunk, Document
from citewise.store import cjk
from citewise.store.base import DocumentUpdate, SearchFilter
from citewise.store.dense import DenseIndex, as_windows
from citewise.store.sqlite_schema import (
    C_CHUNK_COLUMNS,
    CHUNK_COLUMNS,
    DIM_KEY,
    GENERATION_KEY,
    SCHEMA,
    SCHEMA_VERSION,
    STOPWORDS,
    UPSERT_CHUNK,
    chunk_params,
    fts_query,
    row_to_chunk,
)

# Dots allow release names such as ``langgraph-openai-serve-0.12.0``; the first character
# can never be one, so a name cannot be hidden or a relative path.
_KB_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def _check_meta(meta: Mapping[str, str]) -> None:
    reserved = [key for key in meta if key.startswith("_")]
    if reserved:
        raise ValueError(f"meta keys starting with '_' are reserved: {reserved}")


def _merge_meta(conn: sqlite3.Connection, meta: Mapping[str, str]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in meta.items()]
    )


def _record_schema_version(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('_schema', ?)", (SCHEMA_VERSION,))


class SQLiteStore:
    """Knowledge bases as SQLite files ``root/{kb}.sqlite`` (WAL mode).

    Creating a knowledge base: ``create(kb, meta)`` explicitly, or implicitly by the first
    write (``apply``, ``upsert``, ``set_meta``). Every read, ``delete_document`` and ``drop``
    of an unknown knowledge base raise KnowledgeBaseError and never create a file.

    Each thread gets its own connection per knowledge base; WAL lets reads proceed during a
    write and see the state before it until it commits.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        self._conns: dict[tuple[int, str], sqlite3.Connection] = {}
        self._dense: dict[str, DenseIndex] = {}

    # -- knowledge bases -------------------------------------------------------------------

    def _path(self, kb: str) -> Path:
        if not isinstance(kb, str) or not _KB_NAME.match(kb):
            raise ConfigurationError(
                f"invalid knowledge base name {kb!r}: use 1-64 of a-z, 0-9, '.', '_' and '-', "
                "starting with a letter or digit"
            )
        return self.root / f"{kb}.sqlite"

    def exists(self, kb: str) -> bool:
        return self._path(kb).is_file()

    def list_kbs(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(
            p.stem for p in self.root.glob("*.sqlite") if p.is_file() and _KB_NAME.match(p.stem)
        )

    def create(self, kb: str, meta: Mapping[str, str] | None = None) -> None:
        """Create an empty knowledge base (no-op if it exists), then merge ``meta`` into it."""
        path = self._path(kb)
        if not path.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            # Build the schema in a temporary file and link it into place, so nobody ever
            # opens a half-created knowledge base and two creators cannot clobber each other.
            tmp = self.root / f".{kb}.{uuid.uuid4().hex}.tmp"
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                conn.create_function(cjk.GRAMS_FUNCTION, 1, cjk.cjk_grams, deterministic=True)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(f"BEGIN; {SCHEMA} COMMIT;")
                conn.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    # A random start, so a dropped and recreated knowledge base never
                    # reuses a generation another process may have cached.
                    [("_schema", SCHEMA_VERSION), (GENERATION_KEY, str(secrets.randbits(62)))],
                )
            finally:
                conn.close()
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        if meta:
            self.set_meta(kb, meta)

    def drop(self, kb: str) -> None:
        path = self._path(kb)
        if not path.exists():
            raise self._unknown(kb)
        self._close_kb(kb)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)

    def close(self) -> None:
        """Close every connection this store opened (in any thread)."""
        with self._lock:
            conns, self._conns = list(self._conns.values()), {}
            self._dense.clear()
        for conn in conns:
            conn.close()

    def _close_kb(self, kb: str) -> None:
        with self._lock:
            keys = [key for key in self._conns if key[1] == kb]
            conns = [self._conns.pop(key) for key in keys]
            self._dense.pop(kb, None)
        for conn in conns:
            conn.close()

    def _unknown(self, kb: str) -> KnowledgeBaseError:
        known = ", ".join(self.list_kbs()) or "none"
        return KnowledgeBaseError(f"unknown knowledge base {kb!r} (known: {known})")

    def _conn(self, kb: str, *, create: bool = False) -> sqlite3.Connection:
        path = self._path(kb)
        key = (threading.get_ident(), kb)
        conn = self._conns.get(key)
        if conn is not None:
            return conn
        if not path.is_file():
            if not create:
                raise self._unknown(kb)
            self.create(kb)
        # mode=rw: opening must never create an empty file for a mistyped name.
        # check_same_thread=False only so close() can close it from another thread.
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=rw",
            uri=True,
            isolation_level=None,
            timeout=30.0,
            check_same_thread=False,
        )
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA synchronous=NORMAL")
        cjk.install(conn, _record_schema_version)
        with self._lock:
            self._conns[key] = conn
        return conn

    @contextmanager
    def _write(self, kb: str, *, create: bool = True) -> Iterator[sqlite3.Connection]:
        conn = self._conn(kb, create=create)
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            # Bumped in the same transaction, so a cached dense matrix is stale exactly when
            # the data it was built from changed (in this process or any other).
            conn.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ?",
                (GENERATION_KEY,),
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _read(self, kb: str) -> Iterator[sqlite3.Connection]:
        conn = self._conn(kb)
        # One read transaction: every statement inside sees the same snapshot.
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    # -- meta ------------------------------------------------------------------------------

    def get_meta(self, kb: str) -> dict[str, str]:
        with self._read(kb) as conn:
            rows = conn.execute("SELECT key, value FROM meta WHERE key NOT LIKE '\\_%' ESCAPE '\\'")
            return {row["key"]: row["value"] for row in rows}

    def set_meta(self, kb: str, meta: Mapping[str, str]) -> None:
        """Merge ``meta`` into the knowledge base's settings (keys starting '_' are reserved)."""
        _check_meta(meta)
        with self._write(kb) as conn:
            _merge_meta(conn, meta)

    # -- writes ----------------------------------------------------------------------------

    def apply(
        self,
        kb: str,
        updates: Sequence[DocumentUpdate],
        removed_doc_ids: Sequence[str] = (),
        meta: Mapping[str, str] | None = None,
    ) -> None:
        """Replace the listed documents' chunks and delete the removed documents, atomically.

        A chunk whose id is already stored keeps its vectors and BM25 entry (its text is
        unchanged, since the id hashes it); its other fields (url, title, ...) are refreshed.
        ``meta`` is merged in the same transaction, so settings never disagree with the index.
        """
        _check_meta(meta or {})
        with self._write(kb) as conn:
            stored = {row[0] for row in conn.execute("SELECT chunk_id FROM chunks")}
            dim = self._check_updates(conn, updates, stored)
            for update in updates:
                self._apply_one(conn, update, stored, dim)
            for doc_id in removed_doc_ids:
                self._delete_doc(conn, doc_id)
            _merge_meta(conn, meta or {})

    def _check_updates(
        self, conn: sqlite3.Connection, updates: Sequence[DocumentUpdate], stored: set[str]
    ) -> int | None:
        """Validate every update before the first write; returns the vector dimension."""
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (DIM_KEY,)).fetchone()
        dim = int(row[0]) if row else None
        seen: set[str] = set()
        for update in updates:
            doc_id = update.document.doc_id
            for chunk in update.chunks:
                if chunk.doc_id != doc_id:
                    raise ValueError(
                        f"chunk {chunk.chunk_id} belongs to {chunk.doc_id!r}, not {doc_id!r}"
                    )
                if chunk.chunk_id in seen:
                    raise ValueError(f"chunk id {chunk.chunk_id} appears twice")
                seen.add(chunk.chunk_id)
                if chunk.chunk_id in stored:
                    continue
                if chunk.chunk_id not in update.vectors:
                    raise ValueError(f"new chunk {chunk.chunk_id} of {doc_id!r} has no vectors")
                width = as_windows(update.vectors[chunk.chunk_id]).shape[1]
                if dim is not None and width != dim:
                    raise ValueError(f"chunk {chunk.chunk_id}: vector dim {width}, index has {dim}")
                dim = width
        return dim

    def _apply_one(
        self, conn: sqlite3.Connection, update: DocumentUpdate, stored: set[str], dim: int | None
    ) -> None:
        d = update.document
        conn.execute(
            "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?, ?, ?)",
            (d.doc_id, d.title, d.url, d.page, d.content_hash, d.scope),
        )
        keep = [c.chunk_id for c in update.chunks]
        new = set(keep) - stored
        conn.execute(
            "DELETE FROM chunks WHERE doc_id = ? "
            "AND chunk_id NOT IN (SELECT value FROM json_each(?))",
            (d.doc_id, json.dumps(keep)),
        )
        self._insert_chunks(conn, update.chunks)
        self._insert_vectors(conn, {c: v for c, v in update.vectors.items() if c in new}, dim)

    def _insert_chunks(self, conn: sqlite3.Connection, chunks: Sequence[Chunk]) -> None:
        conn.executemany(UPSERT_CHUNK, [chunk_params(c) for c in chunks])

    def _insert_vectors(
        self, conn: sqlite3.Connection, vectors: Mapping[str, Vectors], dim: int | None
    ) -> None:
        if not vectors:
            return
        rows = []
        for chunk_id, v in vectors.items():
            conn.execute("DELETE FROM vectors WHERE chunk_id = ?", (chunk_id,))
            rows += [(chunk_id, i, w.tobytes()) for i, w in enumerate(as_windows(v))]
        conn.executemany("INSERT INTO vectors VALUES (?, ?, ?)", rows)
        conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (DIM_KEY, str(dim)))

    def _delete_doc(self, conn: sqlite3.Connection, doc_id: str) -> int:
        count = conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,)).rowcount
        conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
        return count

    def upsert(self, kb: str, chunks: Sequence[Chunk], vectors: Mapping[str, Vectors]) -> None:
        """Insert or replace chunks; a stored chunk without new vectors keeps its old ones."""
        with self._write(kb) as conn:
            stored = {row[0] for row in conn.execute("SELECT chunk_id FROM chunks")}
            ids = {c.chunk_id for c in chunks}
            missing = [cid for cid in ids if cid not in stored and cid not in vectors]
            if missing:
                raise ValueError(f"new chunks without vectors: {sorted(missing)}")
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (DIM_KEY,)).fetchone()
            dims = {as_windows(v).shape[1] for cid, v in vectors.items() if cid in ids}
            if row:
                dims.add(int(row[0]))
            if len(dims) > 1:
                raise ValueError(f"vectors of different dimensions: {sorted(dims)}")
            self._insert_chunks(conn, chunks)
            self._insert_vectors(
                conn, {c: v for c, v in vectors.items() if c in ids}, next(iter(dims), None)
            )

    def delete_document(self, kb: str, doc_id: str) -> int:
        with self._write(kb, create=False) as conn:
            return self._delete_doc(conn, doc_id)

    # -- reads -----------------------------------------------------------------------------

    def _chunks_by_rid(self, conn: sqlite3.Connection, rids: Sequence[int]) -> dict[int, Chunk]:
        rows = conn.execute(
            f"SELECT rid, {CHUNK_COLUMNS} FROM chunks "
            "WHERE rid IN (SELECT value FROM json_each(?))",
            (json.dumps([int(r) for r in rids]),),
        )
        return {row["rid"]: row_to_chunk(row) for row in rows}

    def get(self, kb: str, ids: Sequence[str]) -> list[Chunk]:
        with self._read(kb) as conn:
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks "
                "WHERE chunk_id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(ids)),),
            )
            found = {row["chunk_id"]: row_to_chunk(row) for row in rows}
        return [found[i] for i in ids if i in found]

    def neighbours(self, kb: str, chunk_id: str, n: int) -> list[Chunk]:
        """Up to n chunks either side of ``chunk_id`` and itself, in document order."""
        with self._read(kb) as conn:
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

    def documents(self, kb: str) -> list[Document]:
        with self._read(kb) as conn:
            rows = conn.execute(
                "SELECT doc_id, title, url, page, content_hash, scope "
                "FROM documents ORDER BY doc_id"
            )
            return [Document(*row) for row in rows]

    def chunk_ids(self, kb: str) -> set[str]:
        with self._read(kb) as conn:
            return {row[0] for row in conn.execute("SELECT chunk_id FROM chunks")}

    # -- search ----------------------------------------------------------------------------

    def _dense_index(self, kb: str, conn: sqlite3.Connection) -> DenseIndex | None:
        gen = conn.execute("SELECT value FROM meta WHERE key = ?", (GENERATION_KEY,)).fetchone()[0]
        cached = self._dense.get(kb)
        if cached is not None and cached.generation == gen:
            return cached
        rows = conn.execute(
            "SELECT c.rid, c.scope, c.page, c.doc_id, v.vector FROM vectors v "
            "JOIN chunks c ON c.chunk_id = v.chunk_id ORDER BY c.rid, v.window"
        ).fetchall()
        if not rows:
            return None
        all_rids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        # Rows are sorted by rid, so each chunk's windows are one contiguous run.
        starts = np.flatnonzero(np.r_[True, all_rids[1:] != all_rids[:-1]])
        firsts = [rows[i] for i in starts]
        index = DenseIndex(
            generation=gen,
            matrix=np.frombuffer(b"".join(r[4] for r in rows), dtype=np.float32).reshape(
                len(rows), -1
            ),
            starts=starts,
            rids=all_rids[starts],
            scopes=np.array([r[1] for r in firsts], dtype=str),
            pages=np.array([r[2] for r in firsts], dtype=str),
            doc_ids=np.array([r[3] for r in firsts], dtype=str),
        )
        with self._lock:
            self._dense[kb] = index
        return index

    def dense(
        self, kb: str, vector: Vectors, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        """Exact cosine search (vectors are L2-normalised, so cosine is a dot product)."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        with self._read(kb) as conn:
            index = self._dense_index(kb, conn)
            if index is None or k <= 0:
                return []
            if query.shape[0] != index.matrix.shape[1]:
                raise ValueError(
                    f"query vector has dim {query.shape[0]}, {kb!r} has {index.matrix.shape[1]}"
                )
            # A chunk's score is its best window's: a match anywhere in it counts fully.
            scores = np.maximum.reduceat(index.matrix @ query, index.starts)
            mask = index.mask(filter)
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
            n = min(k, int(np.count_nonzero(np.isfinite(scores))))
            if n == 0:
                return []
            top = np.argpartition(-scores, n - 1)[:n]
            top = top[np.argsort(-scores[top], kind="stable")]
            chunks = self._chunks_by_rid(conn, index.rids[top].tolist())
        return [
            (chunks[int(r)], float(s)) for r, s in zip(index.rids[top], scores[top], strict=True)
        ]

    def keyword(
        self, kb: str, text: str, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        """BM25 (FTS5) matches for free text, best first; scores are positive, higher is better."""
        # Text with CJK characters is matched by bigrams (see store/cjk.py); all other
        # text by the original index, so its scores are unchanged.
        table = "chunks_cjk" if cjk.has_cjk(text) else "chunks_fts"
        match = cjk.cjk_query(text, STOPWORDS) if table == "chunks_cjk" else fts_query(text)
        with self._read(kb) as conn:
            if not match or k <= 0:
                return []
            where: list[str] = [f"{table} MATCH ?"]
            params: list[object] = [match]
            if filter is not None:
                if filter.scope is not None:
                    # A chunk's scope is a space-separated list: match one member exactly.
                    where.append("(c.scope = ? OR instr(' ' || c.scope || ' ', ?) > 0)")
                    params += [filter.scope, f" {filter.scope} "]
                if filter.page_prefix:
                    # substr, not LIKE: LIKE is case-insensitive and treats % and _ as wildcards.
                    where.append("substr(c.page, 1, ?) = ?")
                    params += [len(filter.page_prefix), filter.page_prefix]
                if filter.doc_ids is not None:
                    where.append("c.doc_id IN (SELECT value FROM json_each(?))")
                    params.append(json.dumps(list(filter.doc_ids)))
            # FTS5's bm25() is negated BM25 (more negative = more relevant, so ORDER BY works
            # ascending); flip the sign so every ranker in citewise reads "higher is better".
            rows = conn.execute(
                f"SELECT -bm25({table}) AS score, {C_CHUNK_COLUMNS} "
                f"FROM {table} JOIN chunks c ON c.rid = {table}.rowid "
                f"WHERE {' AND '.join(where)} ORDER BY bm25({table}) LIMIT ?",
                (*params, k),
            )
            return [(row_to_chunk(row), float(row["score"])) for row in rows]
