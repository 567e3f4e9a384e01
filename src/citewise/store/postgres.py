"""The PostgreSQL store (``postgresql://…``): knowledge bases several server replicas share.

pgvector holds each chunk's window vectors (exact search, or an HNSW index once a knowledge
base has ``hnsw_threshold`` windows); BM25 is FTS5's formula over a postings table, with terms
tokenized exactly as the SQLite store does (``postgres_terms``). Every write is one
transaction, reads are single statements (never a mix, never waiting on a write), and the
write lock is a PostgreSQL advisory lock, so writers in any process or host take turns.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import numpy as np

from citewise.errors import ConfigurationError, KnowledgeBaseError, MissingExtraError
from citewise.models import Chunk, Document, SearchFilter
from citewise.store.availability import connect_timeout, store_timeout
from citewise.store.base import DocumentUpdate
from citewise.store.checks import check_meta, check_name, unknown_kb
from citewise.store.doc_metadata import document

try:
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg import sql
    from psycopg_pool import ConnectionPool
except ImportError as exc:  # pragma: no cover - the extra is installed in CI
    raise MissingExtraError(exc.name or "psycopg", "postgres", "The PostgreSQL store") from None

# After the check above: these modules need psycopg too.
from citewise.store import postgres_queries as queries
from citewise.store import postgres_schema as schema
from citewise.store.postgres_bm25 import top_k
from citewise.store.postgres_pool import checked_connection, first_line, unavailable
from citewise.store.postgres_schema import C_COLUMNS, filter_sql, row_to_chunk
from citewise.store.postgres_terms import bm25_sql, keyword_params
from citewise.store.postgres_write import apply_updates, build_hnsw

if TYPE_CHECKING:
    from citewise.embedding.base import Vectors

__all__ = ["PostgresKB", "PostgresStore", "from_url"]

Conn = psycopg.Connection[Any]

# Row names of a rebuild's new knowledge base and of the one it replaced, until it is deleted;
# a knowledge base's own name never starts with a dot (check_name), so they cannot clash.
_STAGING = ".rebuild."
_REPLACED = ".replaced."


def from_url(url: str, home: Path) -> PostgresStore:
    """The store a ``postgresql://`` (or ``postgres://``) URL names; ``home`` is unused."""
    return PostgresStore(url)


class PostgresStore:
    """Knowledge bases in one schema of a PostgreSQL database (pgvector required).

    The schema is created or migrated on first use when every pending migration is safe
    (``auto_migrate=false`` in the URL turns that off: run ``citewise store migrate``).
    """

    def __init__(self, url: str) -> None:
        self.options = schema.parse_url(url)
        self.schema = self.options.schema
        self.timeout = store_timeout()
        # Name the server, never the URL: it may carry a password.
        where = urlsplit(self.options.conninfo)
        self.where = f"{where.hostname}:{where.port or 5432}{where.path}"
        try:
            first = psycopg.connect(self.options.conninfo, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise ConfigurationError(
                f"cannot connect to the PostgreSQL store at {self.where}: {first_line(exc)}"
            ) from None
        with first as conn:
            if self.options.auto_migrate:
                schema.migrate(conn, self.schema, only_safe=True)
        search_path = sql.SQL("SET search_path TO {}, public").format(sql.Identifier(self.schema))

        def configure(conn: Conn) -> None:
            conn.execute(search_path)
            register_vector(conn)

        # Opened once the schema is known to be current (pgvector's types must exist).
        # Every wait is bounded by the store's deadline: a request for a connection, each
        # connection attempt (libpq's connect_timeout) and the pool's background reconnect
        # loop (5 minutes of back-off by default, which made recovery slow: a request after
        # the database returned waited for the next scheduled attempt).
        self._pool: ConnectionPool[Conn] = ConnectionPool(
            self.options.conninfo,
            min_size=1,
            max_size=8,
            kwargs={"autocommit": True, "connect_timeout": connect_timeout(self.timeout)},
            configure=configure,
            open=False,
            name=f"citewise-{self.schema}",
            timeout=self.timeout,
            reconnect_timeout=self.timeout,
        )
        self._ready = False
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        if self.options.auto_migrate:
            self._open_pool()

    def __repr__(self) -> str:
        return f"PostgresStore(schema={self.schema!r})"

    def migrate(self) -> list[int]:
        """Apply any pending migration (also the unsafe ones); the versions applied."""
        with self._session() as conn:
            return schema.migrate(conn, self.schema)

    def schema_version(self) -> int:
        with self._session() as conn:
            return schema.schema_version(conn, self.schema)

    @contextmanager
    def _session(self) -> Iterator[Conn]:
        """A connection of its own (not the pool's), connected within the store's deadline."""
        try:
            conn = psycopg.connect(
                self.options.conninfo,
                autocommit=True,
                connect_timeout=connect_timeout(self.timeout),
            )
        except psycopg.OperationalError as error:
            raise unavailable(self.where, error) from None
        with conn:
            try:
                yield conn
            except psycopg.OperationalError as error:
                raise unavailable(self.where, error) from None

    def _open_pool(self) -> None:
        with self._guard:
            if self._ready:
                return
            if not self.options.auto_migrate and self.schema_version() != schema.LATEST:
                raise ConfigurationError(
                    "the store's schema is not up to date: run `citewise store migrate`"
                )
            self._pool.open()
            self._ready = True

    # -- the engine ------------------------------------------------------------------------

    def open(self, kb: str) -> PostgresKB:
        if not self.exists(kb):
            raise self._unknown(kb)
        return PostgresKB(self, kb)

    def create(self, kb: str, meta: Mapping[str, str] | None = None) -> PostgresKB:
        check_meta(meta)
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO kbs (name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
                (check_name(kb),),
            )
        handle = PostgresKB(self, kb)
        if meta:
            handle.apply(meta=meta)
        return handle

    @contextmanager
    def rebuild(self, kb: str, meta: Mapping[str, str] | None = None) -> Iterator[PostgresKB]:
        """A new, empty ``kb`` in a row of its own (a hidden name) beside the current one; when
        the block ends without an error one transaction renames the current row away and the
        new one into place, then the replaced rows are deleted. Readers read in one snapshot
        (``_read``), so they see the old knowledge base or the new, never neither. The caller
        holds ``write_lock(kb)``."""
        check_meta(meta)
        name = check_name(kb)
        self._delete_hidden(name)  # what a killed rebuild left
        with self._conn() as conn:
            conn.execute("INSERT INTO kbs (name) VALUES (%s)", (_STAGING + name,))
        try:
            handle = PostgresKB(self, _STAGING + name)
            if meta:
                handle.apply(meta=meta)
            yield handle
            with self._conn() as conn, conn.transaction():
                conn.execute("UPDATE kbs SET name = %s WHERE name = %s", (_REPLACED + name, name))
                conn.execute("UPDATE kbs SET name = %s WHERE name = %s", (name, _STAGING + name))
        finally:
            self._delete_hidden(name)

    def _delete_hidden(self, name: str) -> None:
        """Delete the rows of a rebuild of ``name`` (the new one unfinished, the old replaced)."""
        with self._conn() as conn:
            with conn.transaction():
                ids = [
                    row[0]
                    for row in conn.execute(
                        "DELETE FROM kbs WHERE name = ANY(%s) RETURNING kb_id",
                        ([_STAGING + name, _REPLACED + name],),
                    )
                ]
                conn.execute("DELETE FROM postings WHERE kb_id = ANY(%s)", (ids,))
            for kb_id in ids:
                # Outside the transaction: CONCURRENTLY waits for readers instead of blocking
                # every search of the windows table meanwhile.
                conn.execute(
                    sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(_hnsw_name(kb_id))
                )

    def exists(self, kb: str) -> bool:
        with self._conn() as conn:
            row = conn.execute("SELECT 1 FROM kbs WHERE name = %s", (check_name(kb),)).fetchone()
        return row is not None

    def names(self) -> list[str]:
        with self._conn() as conn:
            return [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM kbs WHERE left(name, 1) <> '.' ORDER BY name"
                )
            ]

    def drop(self, kb: str) -> None:
        with self._conn() as conn, conn.transaction():
            row = conn.execute(
                "DELETE FROM kbs WHERE name = %s RETURNING kb_id", (check_name(kb),)
            ).fetchone()
            if row is None:
                raise self._unknown(kb)
            conn.execute("DELETE FROM postings WHERE kb_id = %s", (row[0],))
            conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(_hnsw_name(row[0])))

    def write_lock(self, kb: str) -> AbstractContextManager[None]:
        return self._write_lock(check_name(kb))

    @contextmanager
    def _write_lock(self, kb: str) -> Iterator[None]:
        # Threads of this process queue on a local lock; the holder takes a session advisory
        # lock on a connection of its own (not the pool's: writers waiting on the lock must
        # not use up the connections the holder needs). The lock spans transactions and ends
        # with the session if this process dies.
        with self._guard:
            local = self._locks.setdefault(kb, threading.Lock())
        key = schema.lock_key("kb", self.schema, kb)
        with local, self._session() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    def close(self) -> None:
        self._pool.close()

    # -- internals -------------------------------------------------------------------------

    def _unknown(self, kb: str) -> KnowledgeBaseError:
        return unknown_kb(kb, self.names())

    def _kb_row(self, conn: Conn, kb: str, *, lock: bool = False) -> dict[str, Any]:
        row = conn.execute(
            "SELECT kb_id, dim, n_chunks, tokens, windows, hnsw_dim FROM kbs WHERE name = %s"
            + (" FOR UPDATE" if lock else ""),
            (kb,),
        ).fetchone()
        if row is None:
            raise self._unknown(kb)
        keys = ("kb_id", "dim", "n_chunks", "tokens", "windows", "hnsw_dim")
        return dict(zip(keys, row, strict=True))

    @contextmanager
    def _conn(self) -> Iterator[Conn]:
        if not self._ready:
            self._open_pool()
        with checked_connection(self._pool, self.timeout, self.where) as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[Conn]:
        """A connection in a read-only snapshot: a search looks its knowledge base up and
        reads its rows in the same state, even while a rebuild switches it."""
        with self._conn() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    def _maybe_build_hnsw(self, kb: str) -> None:
        """Index a knowledge base that has grown past the threshold (after the write).

        The writer that crosses the threshold builds it (other replicas skip: the advisory
        lock is taken); meanwhile searches stay exact, so they are never wrong, only slower.
        """
        with self._conn() as conn:
            info = self._kb_row(conn, kb)
            if info["hnsw_dim"] or info["windows"] < self.options.hnsw_threshold:
                return
            key = schema.lock_key("hnsw", self.schema, str(info["kb_id"]))
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            if not got or not got[0]:
                return
            try:
                name = f"windows_hnsw_{info['kb_id']}"
                o = self.options
                build_hnsw(conn, info["kb_id"], info["dim"], name, memory=o.build_memory,
                           workers=o.build_workers, m=o.hnsw_m,
                           ef_construction=o.ef_construction)  # fmt: skip
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))


def _hnsw_name(kb_id: int) -> sql.Identifier:
    return sql.Identifier(f"windows_hnsw_{kb_id}")


class PostgresKB:
    """A handle on one knowledge base of a :class:`PostgresStore` (see ``KBStore``)."""

    def __init__(self, store: PostgresStore, name: str) -> None:
        self.store = store
        self.name = name

    def __repr__(self) -> str:
        return f"PostgresKB({self.name!r}, schema={self.store.schema!r})"

    def apply(
        self,
        updates: Sequence[DocumentUpdate] = (),
        removed_doc_ids: Sequence[str] = (),
        meta: Mapping[str, str] | None = None,
    ) -> None:
        check_meta(meta)
        with self.store._conn() as conn, conn.transaction():
            # The row lock serializes writes to this knowledge base, even without write_lock.
            info = self.store._kb_row(conn, self.name, lock=True)
            apply_updates(conn, info, updates, removed_doc_ids, meta)
        if not info["hnsw_dim"]:
            self.store._maybe_build_hnsw(self.name)

    def dense(
        self, vector: Vectors, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        with self.store._read() as conn:
            info = self.store._kb_row(conn, self.name)
            if k <= 0 or info["dim"] is None or info["n_chunks"] == 0:
                return []
            if query.shape[0] != info["dim"]:
                raise ValueError(
                    f"query vector has dim {query.shape[0]}, {self.name!r} has {info['dim']}"
                )
            where, params = filter_sql(filter)
            params |= {"q": query, "kb": info["kb_id"], "k": k}
            if info["hnsw_dim"]:
                return self._approximate(conn, info, where, params)
            # Exact: every window of the knowledge base; a chunk scores as its best window.
            # Vectors are unit length, so the inner product is the cosine.
            rows = conn.execute(queries.exact_dense(where).encode(), params).fetchall()
        return [(row_to_chunk(r[1:]), float(r[0])) for r in rows]

    def _approximate(
        self, conn: Conn, info: dict[str, Any], where: str, params: dict[str, Any]
    ) -> list[tuple[Chunk, float]]:
        # The partial HNSW index matches only this exact expression and a literal kb_id.
        dim, kb_id = int(info["hnsw_dim"]), int(info["kb_id"])
        params["n"] = max(4 * params["k"], 40)
        with conn.transaction():
            conn.execute(f"SET LOCAL hnsw.ef_search = {self.store.options.ef_search}".encode())
            # Keep scanning the graph until enough windows pass the filter.
            conn.execute(b"SET LOCAL hnsw.iterative_scan = relaxed_order")
            query = queries.approximate_dense(where, dim, kb_id)
            rows = conn.execute(query.encode(), params).fetchall()
        return [(row_to_chunk(r[1:]), float(r[0])) for r in rows]

    def keyword(
        self, text: str, k: int, filter: SearchFilter | None = None
    ) -> list[tuple[Chunk, float]]:
        found = keyword_params(text)
        with self.store._read() as conn:
            info = self.store._kb_row(conn, self.name)
            if found is None or k <= 0 or info["n_chunks"] == 0:
                return []
            where, params = filter_sql(filter)
            if "idents" not in found and found["lo"] == found["hi"]:
                # Exact terms only: read each term's postings best first (postgres_bm25).
                terms, index = cast(list[str], found["lo"]), cast(int, found["idx"])
                return self._chunks_of(conn, top_k(conn, info, index, terms, k, where, params))
            params |= found | {"kb": info["kb_id"], "k": k}
            query = bm25_sql(where, C_COLUMNS, identifiers="idents" in found)
            rows = conn.execute(query.encode(), params).fetchall()
        return [(row_to_chunk(r[1:]), float(r[0])) for r in rows]

    @staticmethod
    def _chunks_of(conn: Conn, top: list[tuple[int, float]]) -> list[tuple[Chunk, float]]:
        """The chunks of ranked (rid, score) pairs, in their order."""
        if not top:
            return []
        rows = conn.execute(
            f"SELECT c.rid, {C_COLUMNS} FROM chunks c WHERE c.rid = ANY(%s)".encode(),
            ([rid for rid, _ in top],),
        ).fetchall()
        found = {int(r[0]): row_to_chunk(r[1:]) for r in rows}
        return [(found[rid], score) for rid, score in top]

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        with self.store._read() as conn:
            kb_id = self.store._kb_row(conn, self.name)["kb_id"]
            rows = conn.execute(
                f"SELECT {C_COLUMNS} FROM chunks c WHERE c.kb_id = %s AND c.chunk_id = ANY(%s)",
                (kb_id, list(ids)),
            ).fetchall()
        found = {r[0]: row_to_chunk(r) for r in rows}
        return [found[i] for i in ids if i in found]

    def neighbours(self, chunk_id: str, n: int) -> list[Chunk]:
        n = max(n, 0)
        with self.store._read() as conn:
            kb_id = self.store._kb_row(conn, self.name)["kb_id"]
            rows = conn.execute(
                queries.NEIGHBOURS.encode(),
                {"kb": kb_id, "id": chunk_id, "n": n, "n1": n + 1},
            ).fetchall()
        return [row_to_chunk(r) for r in rows]

    def documents(self) -> list[Document]:
        with self.store._read() as conn:
            kb_id = self.store._kb_row(conn, self.name)["kb_id"]
            rows = conn.execute(
                "SELECT doc_id, title, url, page, content_hash, scope, metadata FROM documents "
                'WHERE kb_id = %s ORDER BY doc_id COLLATE "C"',
                (kb_id,),
            ).fetchall()
        return [document(row) for row in rows]

    def chunk_ids(self) -> set[str]:
        with self.store._read() as conn:
            kb_id = self.store._kb_row(conn, self.name)["kb_id"]
            return {
                r[0] for r in conn.execute("SELECT chunk_id FROM chunks WHERE kb_id = %s", (kb_id,))
            }

    def meta(self) -> dict[str, str]:
        with self.store._conn() as conn:
            row = conn.execute("SELECT meta FROM kbs WHERE name = %s", (self.name,)).fetchone()
            if row is None:
                raise self.store._unknown(self.name)
        return {str(k): str(v) for k, v in row[0].items()}
