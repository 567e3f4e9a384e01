"""The PostgreSQL store's writes: one ``apply`` as bulk statements, and the HNSW index build.

An apply runs inside the caller's transaction with the knowledge base's row locked: chunks
arrive by COPY into a temporary table and are merged in one statement; windows and BM25
postings are COPYed. The knowledge base's counters (chunks, tokens per index, windows) move
by deltas, so a write costs what it changes, not the size of the knowledge base.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from citewise.store.base import DocumentUpdate
from citewise.store.checks import check_updates
from citewise.store.columns import CHUNK_FIELDS, chunk_values
from citewise.store.dense import as_windows
from citewise.store.doc_metadata import metadata_json
from citewise.store.postgres_terms import IDENT, document_terms, identifier_counts

_COLUMNS = ", ".join(CHUNK_FIELDS)
_INCOMING = """CREATE TEMP TABLE IF NOT EXISTS incoming (
    chunk_id text, doc_id text, position integer, section_index integer, text text,
    title text, heading_path text, anchor text, url text, page text, scope text,
    page_number integer, lengths integer[], n_windows integer) ON COMMIT DELETE ROWS"""
_UPDATED = ", ".join(f"{c} = excluded.{c}" for c in CHUNK_FIELDS if c != "chunk_id")
# A stored chunk keeps its vectors; its BM25 lengths change only with its text or anchor
# (identifiers come from both).
_MERGE = f"""INSERT INTO chunks (kb_id, {_COLUMNS}, lengths, n_windows)
SELECT %s, {_COLUMNS}, lengths, n_windows FROM incoming
ON CONFLICT (kb_id, chunk_id) DO UPDATE SET {_UPDATED},
    lengths = CASE WHEN chunks.text IS DISTINCT FROM excluded.text
                   OR chunks.anchor IS DISTINCT FROM excluded.anchor
                   THEN excluded.lengths ELSE chunks.lengths END
RETURNING chunk_id, rid"""
_GONE = """WITH gone AS ({delete} RETURNING rid, lengths, n_windows),
postings_gone AS (DELETE FROM postings WHERE kb_id = %s AND rid IN (SELECT rid FROM gone))
SELECT count(*), coalesce(sum(lengths[1]), 0), coalesce(sum(lengths[2]), 0),
    coalesce(sum(lengths[3]), 0), coalesce(sum(n_windows), 0) FROM gone"""


def apply_updates(
    conn: psycopg.Connection[Any],
    info: Mapping[str, Any],
    updates: Sequence[DocumentUpdate],
    removed_doc_ids: Sequence[str],
    meta: Mapping[str, str] | None,
) -> None:
    """Write one apply in the open transaction (``info``: the locked ``kbs`` row)."""
    kb_id = info["kb_id"]
    ids = [c.chunk_id for u in updates for c in u.chunks]
    stored = {
        r[0]: (r[1], r[2], r[3])
        for r in conn.execute(
            "SELECT chunk_id, text, lengths, anchor FROM chunks "
            "WHERE kb_id = %s AND chunk_id = ANY(%s)",
            (kb_id, ids),
        )
    }
    dim = check_updates(updates, stored.keys(), info["dim"])
    chunks = [c for u in updates for c in u.chunks]
    new = {c.chunk_id for c in chunks} - stored.keys()
    retext = [
        c for c in chunks if c.chunk_id in new or stored[c.chunk_id][0::2] != (c.text, c.anchor)
    ]
    found = document_terms([c.text for c in retext], [c.anchor for c in retext])
    terms = dict(zip((c.chunk_id for c in retext), found, strict=True))
    vectors = {cid: as_windows(v) for u in updates for cid, v in u.vectors.items() if cid in new}
    # Counter deltas: chunks, tokens in the main, CJK and identifier index, windows.
    delta = [0, 0, 0, 0, 0]

    if updates:
        conn.cursor().executemany(
            "INSERT INTO documents VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (kb_id, doc_id) "
            "DO UPDATE SET title = excluded.title, url = excluded.url, page = excluded.page, "
            "content_hash = excluded.content_hash, scope = excluded.scope, "
            "metadata = excluded.metadata",
            [(kb_id, d.doc_id, d.title, d.url, d.page, d.content_hash, d.scope,
              metadata_json(d.metadata)) for d in (u.document for u in updates)],
        )  # fmt: skip
        # The updated documents' chunks that are not in the update.
        _subtract(conn, delta, "DELETE FROM chunks WHERE kb_id = %s AND doc_id = ANY(%s) "
                  "AND NOT (chunk_id = ANY(%s))",
                  (kb_id, [u.document.doc_id for u in updates], ids))  # fmt: skip
        conn.execute(_INCOMING)
        with conn.cursor().copy("COPY incoming FROM STDIN") as copy:
            for c in chunks:
                counts = terms.get(c.chunk_id)
                lengths = counts.lengths if counts else [0, 0, 0]
                n_windows = len(vectors[c.chunk_id]) if c.chunk_id in vectors else 0
                copy.write_row((*chunk_values(c), lengths, n_windows))
        rids = dict(conn.execute(_MERGE.encode(), (kb_id,)).fetchall())
        conn.execute("TRUNCATE incoming")
        for cid, counts in terms.items():
            if cid in new:
                delta[0] += 1
                delta[4] += len(vectors[cid])
                old = [0, 0, 0]
            else:
                old = list(stored[cid][1])
            for i, length in enumerate(counts.lengths):
                delta[1 + i] += length - old[i]
        changed = [rids[c.chunk_id] for c in retext if c.chunk_id not in new]
        if changed:
            conn.execute("DELETE FROM postings WHERE rid = ANY(%s)", (changed,))
        with conn.cursor().copy(
            "COPY postings (kb_id, idx, term, rid, tf, dl) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int8", "int2", "text", "int8", "int4", "int4"])
            for cid, counts in terms.items():
                rid = rids[cid]
                for idx, counter, dl in counts.indexes():
                    for term, tf in counter.items():
                        copy.write_row((kb_id, idx, term, rid, tf, dl))
        with conn.cursor().copy(
            'COPY windows (rid, "window", kb_id, embedding) FROM STDIN (FORMAT BINARY)'
        ) as copy:
            copy.set_types(["int8", "int4", "int8", "vector"])
            for cid, windows in vectors.items():
                for i, window in enumerate(windows):
                    copy.write_row((rids[cid], i, kb_id, window))
    if removed_doc_ids:
        removed = list(removed_doc_ids)
        _subtract(conn, delta, "DELETE FROM chunks WHERE kb_id = %s AND doc_id = ANY(%s)",
                  (kb_id, removed))  # fmt: skip
        conn.execute(
            "DELETE FROM documents WHERE kb_id = %s AND doc_id = ANY(%s)", (kb_id, removed)
        )
    conn.execute(
        "UPDATE kbs SET generation = generation + 1, n_chunks = n_chunks + %s, "
        "tokens = ARRAY[tokens[1] + %s, tokens[2] + %s, tokens[3] + %s], windows = windows + %s, "
        "dim = coalesce(dim, %s), meta = meta || %s WHERE kb_id = %s",
        (*delta, dim if vectors else None, Jsonb(dict(meta or {})), kb_id),
    )


def backfill_identifiers(conn: psycopg.Connection[Any]) -> None:
    """Index the identifiers of every stored chunk (migration 2, in its transaction).

    Chunks written before the identifier index have no identifier postings, their lengths
    and their knowledge base's token counts two entries instead of three.
    """
    conn.execute(
        "CREATE TEMP TABLE ident_lengths (rid bigint PRIMARY KEY, n integer) ON COMMIT DROP"
    )
    rows = conn.execute("SELECT rid, kb_id, text, anchor FROM chunks").fetchall()
    with conn.cursor().copy(
        "COPY postings (kb_id, idx, term, rid, tf, dl) FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["int8", "int2", "text", "int8", "int4", "int4"])
        lengths = []
        for rid, kb_id, text, anchor in rows:
            counts = identifier_counts(text, anchor)
            dl = counts.total()
            lengths.append((rid, dl))
            for term, tf in counts.items():
                copy.write_row((kb_id, IDENT, term, rid, tf, dl))
    with conn.cursor().copy("COPY ident_lengths (rid, n) FROM STDIN") as copy:
        for row in lengths:
            copy.write_row(row)
    conn.execute(
        "UPDATE chunks c SET lengths = c.lengths[1:2] || l.n FROM ident_lengths l "
        "WHERE c.rid = l.rid"
    )
    conn.execute(
        "UPDATE kbs k SET tokens = k.tokens[1:2] || coalesce("
        "(SELECT sum(lengths[3]) FROM chunks c WHERE c.kb_id = k.kb_id), 0)::bigint"
    )


def _subtract(
    conn: psycopg.Connection[Any], delta: list[int], delete: str, params: tuple[Any, ...]
) -> None:
    row = conn.execute(_GONE.format(delete=delete).encode(), (*params, params[0])).fetchone()
    if row:
        for i, value in enumerate(row):
            delta[i] -= int(value)


def build_hnsw(
    conn: psycopg.Connection[Any],
    kb_id: int,
    dim: int,
    name: str,
    *,
    memory: str,
    workers: int | None,
    m: int,
    ef_construction: int,
) -> None:
    """Build knowledge base ``kb_id``'s HNSW index (cosine) on an autocommit connection.

    CONCURRENTLY: reads and other knowledge bases' writes go on while it builds. A build
    interrupted earlier (a crash) leaves an invalid index behind: it is dropped first.
    """
    index = sql.Identifier(name)
    invalid = conn.execute(
        "SELECT NOT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace",
        (name,),
    ).fetchone()
    if invalid and invalid[0]:
        conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(index))
    # Validated by parse_url: a memory like 512MB or 2GB, integers in range.
    conn.execute(f"SET maintenance_work_mem = '{memory}'".encode())
    if workers is not None:
        conn.execute(f"SET max_parallel_maintenance_workers = {workers}".encode())
    shape = f"m = {int(m)}, ef_construction = {int(ef_construction)}"
    try:
        conn.execute(
            sql.SQL(
                "CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON windows USING hnsw "
                f"((embedding::vector({int(dim)})) vector_cosine_ops) WITH ({shape}) "
                f"WHERE kb_id = {int(kb_id)}"
            ).format(index)
        )
    finally:
        conn.execute(b"RESET maintenance_work_mem")
        conn.execute(b"RESET max_parallel_maintenance_workers")
    # Fresh statistics, so the planner weighs the new index against the real table size.
    conn.execute(b"ANALYZE windows")
    conn.execute("UPDATE kbs SET hnsw_dim = %s WHERE kb_id = %s", (dim, kb_id))
