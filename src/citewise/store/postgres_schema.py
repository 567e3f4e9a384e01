"""The PostgreSQL store's schema: versioned migrations, the URL's options, columns and filters.

Every table lives in one PostgreSQL schema (``citewise`` unless the URL says ``?schema=``), so
one database can hold several independent stores. ``schema_version`` records the migrations
applied; :func:`migrate` applies the missing ones under an advisory lock, in one transaction.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from citewise.errors import ConfigurationError
from citewise.models import Chunk, SearchFilter
from citewise.store.columns import CHUNK_FIELDS, chunk_from_values
from citewise.store.postgres_bm25 import IMPACT
from citewise.store.postgres_write import backfill_identifiers


@dataclass(frozen=True)
class Migration:
    version: int
    # Safe: additive, quick on a large store, fine while older processes still run.
    safe: bool
    statements: tuple[str, ...]
    # Data the statements cannot derive in SQL, written in the same transaction after them.
    backfill: Callable[[psycopg.Connection[Any]], None] | None = None


MIGRATIONS = (
    Migration(
        1,
        True,
        (
            """CREATE TABLE kbs (
                kb_id bigserial PRIMARY KEY, name text COLLATE "C" NOT NULL UNIQUE,
                generation bigint NOT NULL DEFAULT 0, dim integer,
                n_chunks bigint NOT NULL DEFAULT 0, tokens bigint[] NOT NULL DEFAULT '{0,0}',
                windows bigint NOT NULL DEFAULT 0, hnsw_dim integer,
                meta jsonb NOT NULL DEFAULT '{}')""",
            """CREATE TABLE documents (
                kb_id bigint NOT NULL REFERENCES kbs ON DELETE CASCADE, doc_id text NOT NULL,
                title text NOT NULL, url text NOT NULL, page text NOT NULL,
                content_hash text NOT NULL, scope text NOT NULL, PRIMARY KEY (kb_id, doc_id))""",
            """CREATE TABLE chunks (
                rid bigserial PRIMARY KEY, kb_id bigint NOT NULL REFERENCES kbs ON DELETE CASCADE,
                chunk_id text NOT NULL, doc_id text NOT NULL, position integer NOT NULL,
                section_index integer NOT NULL, text text NOT NULL, title text NOT NULL,
                heading_path text NOT NULL, anchor text NOT NULL, url text NOT NULL,
                page text NOT NULL, scope text NOT NULL, page_number integer,
                lengths integer[] NOT NULL, n_windows integer NOT NULL,
                UNIQUE (kb_id, chunk_id))""",
            "CREATE INDEX chunks_doc ON chunks (kb_id, doc_id, position)",
            # A chunk's embedded windows; dense search scores a chunk by its best window.
            """CREATE TABLE windows (
                rid bigint NOT NULL REFERENCES chunks ON DELETE CASCADE, "window" integer NOT NULL,
                kb_id bigint NOT NULL, embedding vector NOT NULL, PRIMARY KEY (rid, "window"))""",
            "CREATE INDEX windows_kb ON windows (kb_id)",
            # BM25's inverted index: idx 0 is the text as FTS5 tokenizes it, 1 its CJK bigrams,
            # 2 both (text without CJK: the same terms, stored once); dl is the chunk's length
            # in that index (scoring needs no lookup of the chunk). No foreign key: checking
            # one per posting would dominate ingest; the writes delete postings with chunks.
            """CREATE TABLE postings (
                kb_id bigint NOT NULL, idx smallint NOT NULL, term text COLLATE "C" NOT NULL,
                rid bigint NOT NULL, tf integer NOT NULL,
                dl integer NOT NULL, PRIMARY KEY (kb_id, idx, term, rid))""",
            "CREATE INDEX postings_rid ON postings (rid)",
        ),
    ),
    # Identifiers as whole terms (idx 3 in postings; a third entry in chunks.lengths and
    # kbs.tokens). Not safe while older processes run: they would write chunks without
    # identifier postings, so `citewise store migrate` runs it once they are stopped.
    Migration(
        2,
        False,
        ("ALTER TABLE kbs ALTER COLUMN tokens SET DEFAULT '{0,0,0}'",),
        backfill_identifiers,
    ),
    # Documents' metadata (author, subject, description, created, modified). Additive with a
    # default: older processes keep writing documents (without metadata).
    Migration(
        3,
        True,
        ("ALTER TABLE documents ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'",),
    ),
    # BM25 without scoring every posting of a frequent term (postgres_bm25.py): each term's
    # document frequency, kept by statement triggers on postings (so older processes' writes
    # keep it current too: safe), and the postings of each term ordered by impact. On a large
    # store the backfill and the index take minutes (about as long as the postings' primary
    # key took to build); reads go on meanwhile, writes wait.
    Migration(
        4,
        True,
        (
            """CREATE TABLE term_stats (
                kb_id bigint NOT NULL, idx smallint NOT NULL, term text COLLATE "C" NOT NULL,
                df bigint NOT NULL, PRIMARY KEY (kb_id, idx, term))""",
            # SET search_path FROM CURRENT: the store's schema, whatever the writer's path.
            """CREATE FUNCTION term_stats_added() RETURNS trigger LANGUAGE plpgsql
            SET search_path FROM CURRENT AS $$ BEGIN
                INSERT INTO term_stats AS s (kb_id, idx, term, df)
                SELECT kb_id, idx, term, count(*) FROM added GROUP BY kb_id, idx, term
                ON CONFLICT (kb_id, idx, term) DO UPDATE SET df = s.df + excluded.df;
                RETURN NULL;
            END $$""",
            """CREATE FUNCTION term_stats_removed() RETURNS trigger LANGUAGE plpgsql
            SET search_path FROM CURRENT AS $$ BEGIN
                UPDATE term_stats s SET df = s.df - g.n FROM (
                    SELECT kb_id, idx, term, count(*) AS n FROM removed
                    GROUP BY kb_id, idx, term) g
                WHERE s.kb_id = g.kb_id AND s.idx = g.idx AND s.term = g.term;
                DELETE FROM term_stats s USING (SELECT DISTINCT kb_id, idx, term FROM removed) g
                WHERE s.kb_id = g.kb_id AND s.idx = g.idx AND s.term = g.term AND s.df <= 0;
                RETURN NULL;
            END $$""",
            """CREATE TRIGGER postings_added AFTER INSERT ON postings
            REFERENCING NEW TABLE AS added FOR EACH STATEMENT
            EXECUTE FUNCTION term_stats_added()""",
            """CREATE TRIGGER postings_removed AFTER DELETE ON postings
            REFERENCING OLD TABLE AS removed FOR EACH STATEMENT
            EXECUTE FUNCTION term_stats_removed()""",
            # After the triggers, in the same transaction (they lock out writers until commit).
            """INSERT INTO term_stats (kb_id, idx, term, df)
            SELECT kb_id, idx, term, count(*) FROM postings GROUP BY kb_id, idx, term""",
            f"CREATE INDEX postings_impact ON postings (kb_id, idx, term, {IMPACT} DESC) "
            "INCLUDE (rid)",
        ),
    ),
    # Keyword search read from the indexes alone: both postings indexes carry tf and dl, so a
    # term's postings (in rid or impact order) and a chunk's posting looked up by key need no
    # visit to the table (one random page read per posting on a store larger than memory:
    # most of a frequent-word query's time at 1M windows). The primary key is rebuilt as an
    # index with the same key plus those columns. Safe (older processes read and write the
    # same keys); on a large store each index takes minutes to build, writes wait meanwhile.
    Migration(
        5,
        True,
        (
            "SET LOCAL maintenance_work_mem = '256MB'",
            "CREATE UNIQUE INDEX postings_key ON postings (kb_id, idx, term, rid) INCLUDE (tf, dl)",
            "ALTER TABLE postings DROP CONSTRAINT postings_pkey",
            # Renames postings_key to postings_pkey.
            "ALTER TABLE postings ADD CONSTRAINT postings_pkey PRIMARY KEY "
            "USING INDEX postings_key",
            f"CREATE INDEX postings_best ON postings (kb_id, idx, term, {IMPACT} DESC) "
            "INCLUDE (rid, tf, dl)",
            "DROP INDEX postings_impact",
        ),
    ),
)
LATEST = MIGRATIONS[-1].version


# The HNSW graph's shape unless the URL says otherwise (see Options).
DEFAULT_M = 32
DEFAULT_EF_CONSTRUCTION = 128


@dataclass(frozen=True)
class Options:
    """A ``postgresql://`` store URL split into the connection and citewise's own options."""

    conninfo: str
    schema: str
    hnsw_threshold: int
    ef_search: int
    auto_migrate: bool
    # maintenance_work_mem of an HNSW build: the graph should fit (about 2 kB per 384-dim
    # window), or the build slows several-fold once it spills.
    build_memory: str
    # An HNSW build's parallel workers (max_parallel_maintenance_workers; None: the server's)
    # and the graph's shape (pgvector's m and ef_construction: more, better recall, slower).
    # 32 / 128, as the SQLite store's graph: at 1M clustered windows 16 / 64 found 0.63 of the
    # exact top 10 at ef_search 100, 32 / 128 found all of it (benchmarks/postgres-1m.md).
    build_workers: int | None = None
    hnsw_m: int = DEFAULT_M
    ef_construction: int = DEFAULT_EF_CONSTRUCTION


_OPTIONS = {
    "schema", "hnsw_threshold", "ef_search", "auto_migrate", "build_memory", "build_workers",
    "hnsw_m", "ef_construction",
}  # fmt: skip
_MEMORY = re.compile(r"[1-9][0-9]{0,6}(kB|MB|GB)")
_IDENT = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def parse_url(url: str) -> Options:
    """``postgresql://user:pass@host/db?schema=…&hnsw_threshold=…&ef_search=…&build_memory=…``.

    ``auto_migrate=false``: never change the schema on first use. ``build_workers``,
    ``hnsw_m`` and ``ef_construction`` shape HNSW builds (indexes built before keep theirs).

    Other query parameters go to libpq (``sslmode``, …). Errors never echo the URL: it may
    carry a password.
    """
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in query if k in _OPTIONS}
    rest = [(k, v) for k, v in query if k not in _OPTIONS]
    schema = ours.get("schema", "citewise")
    if not _IDENT.fullmatch(schema):
        raise ConfigurationError(
            f"store URL: schema must be a lowercase identifier, not {schema!r}"
        )
    try:
        # Measured on SciFact (19k windows): HNSW finds 99.9% of exact search's top 10.
        threshold = int(ours.get("hnsw_threshold", "10000"))
        ef_search = int(ours.get("ef_search", "100"))
    except ValueError:
        raise ConfigurationError("store URL: hnsw_threshold and ef_search are integers") from None
    if threshold < 1 or not 1 <= ef_search <= 1000:
        raise ConfigurationError("store URL: hnsw_threshold >= 1, ef_search 1-1000")
    auto = ours.get("auto_migrate", "true").lower() not in ("0", "false", "no", "off")
    memory = ours.get("build_memory", "512MB")
    if not _MEMORY.fullmatch(memory):
        raise ConfigurationError(f"store URL: build_memory is like 512MB or 2GB, not {memory!r}")
    try:
        workers = int(ours["build_workers"]) if "build_workers" in ours else None
        m = int(ours.get("hnsw_m", DEFAULT_M))
        ef_construction = int(ours.get("ef_construction", DEFAULT_EF_CONSTRUCTION))
    except ValueError:
        raise ConfigurationError(
            "store URL: build_workers, hnsw_m and ef_construction are integers"
        ) from None
    if workers is not None and not 0 <= workers <= 64:
        raise ConfigurationError("store URL: build_workers is 0-64")
    # pgvector's own limits: m 2-100, ef_construction 4-1000 and at least 2 m.
    if not 2 <= m <= 100 or not max(4, 2 * m) <= ef_construction <= 1000:
        raise ConfigurationError("store URL: hnsw_m 2-100, ef_construction 2*hnsw_m to 1000")
    conninfo = urlunsplit(("postgresql", parts.netloc, parts.path, urlencode(rest), ""))
    return Options(
        conninfo, schema, threshold, ef_search, auto, memory, workers, m, ef_construction
    )


def lock_key(*parts: str) -> int:
    """A signed 64-bit advisory lock key for ``parts``."""
    digest = hashlib.sha256("\x00".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def schema_version(conn: psycopg.Connection[Any], schema: str) -> int:
    """The highest migration applied to ``schema`` (0: none)."""
    row = conn.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (f"{schema}.schema_version",)
    ).fetchone()
    if not row or not row[0]:
        return 0
    got = conn.execute(
        sql.SQL("SELECT coalesce(max(version), 0) FROM {}.schema_version").format(
            sql.Identifier(schema)
        )
    ).fetchone()
    return int(got[0]) if got else 0


def migrate(conn: psycopg.Connection[Any], schema: str, *, only_safe: bool = False) -> list[int]:
    """Apply the missing migrations to ``schema`` in one transaction; the versions applied.

    ``only_safe``: refuse (ConfigurationError) if a pending one is not safe to run unattended.
    A database newer than this citewise is refused either way.
    """
    with conn.transaction():
        # Serializes migrations of this schema across processes.
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("migrate", schema),))
        current = schema_version(conn, schema)
        if current > LATEST:
            raise ConfigurationError(
                f"the store's schema is version {current}, newer than this citewise's "
                f"({LATEST}): upgrade citewise"
            )
        pending = [m for m in MIGRATIONS if m.version > current]
        # An empty store has nothing an unsafe migration could harm.
        if only_safe and current > 0 and any(not m.safe for m in pending):
            raise ConfigurationError(
                f"the store's schema (version {current}) needs migrations that are not run "
                "automatically: run `citewise store migrate`"
            )
        if not pending:
            return []
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("SET LOCAL search_path TO {}, public").format(sql.Identifier(schema)))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for m in pending:
            for statement in m.statements:
                conn.execute(statement.encode())
            if m.backfill is not None:
                m.backfill(conn)
            conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (m.version,))
        return [m.version for m in pending]


C_COLUMNS = ", ".join(f"c.{name}" for name in CHUNK_FIELDS)


def row_to_chunk(row: Sequence[Any]) -> Chunk:
    """A chunk from the CHUNK_FIELDS columns at the start of ``row``."""
    return chunk_from_values(row[: len(CHUNK_FIELDS)])


def filter_sql(f: SearchFilter | None) -> tuple[str, dict[str, Any]]:
    """A WHERE condition on chunks aliased ``c`` and its named parameters ("true": no filter)."""
    where = ["true"]
    params: dict[str, Any] = {}
    if f is None:
        return "true", params
    if f.scope is not None:
        # A chunk's scope is a space-separated list: match one member exactly.
        where.append("(c.scope = %(f_scope)s OR %(f_scope)s = ANY(string_to_array(c.scope, ' ')))")
        params["f_scope"] = f.scope
    if f.page_prefix:
        # left(), not LIKE: LIKE treats % and _ as wildcards.
        where.append("left(c.page, %(f_len)s) = %(f_page)s")
        params |= {"f_len": len(f.page_prefix), "f_page": f.page_prefix}
    if f.doc_ids is not None:
        where.append("c.doc_id = ANY(%(f_docs)s::text[])")
        params["f_docs"] = list(f.doc_ids)
    return " AND ".join(where), params
