"""The PostgreSQL store beyond the contract: SQLite's BM25 scores, HNSW, migrations, locking."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import psycopg
import pytest

from citewise.errors import ConfigurationError
from citewise.store import DocumentUpdate, SearchFilter, Store, open_store
from citewise.store.postgres import PostgresStore
from citewise.store.postgres_schema import LATEST, parse_url
from tests import pg
from tests.store.pg_versions import in_schema, to_version_3
from tests.store.support import (
    CJK_TEXTS,
    DIM,
    IDENTIFIER_QUERIES,
    IDENTIFIER_TEXTS,
    unit,
    update,
)

CORPUS = [
    "Configuring servers and the server port",
    "The server runs jobs; running servers need ports.",
    "A café note on servers and caching",
    "Caches, cached pages and the cache key",
    "Authentication with API keys; rotating keys weekly",
    "what and how: the stop words only",
    "Generalization of generalized generators",
    *CJK_TEXTS.values(),
    *IDENTIFIER_TEXTS,
]
QUERIES = [
    "How do I configure a server?", "server servers", "cache", "keys rotate", "what how",
    "generalize", "café", "删除文档要依靠哪个字段？", "天气", "字", "vector_weight 有什么作用",
    "jobs in the cluster", "nothing matches zebra", *IDENTIFIER_QUERIES,
]  # fmt: skip


def test_keyword_scores_equal_the_sqlite_stores(store: Store, tmp_path: Path) -> None:
    sqlite = open_store(None, home=tmp_path)
    try:
        updates = [update(f"d{i}", [text], scope="s" if i % 2 else "") for i, text in
                   enumerate(CORPUS)]  # fmt: skip
        for s in (sqlite, store):
            s.create("kb").apply(updates)
        for query in QUERIES:
            for f in (None, SearchFilter(scope="s")):
                want = sqlite.open("kb").keyword(query, 20, f)
                got = store.open("kb").keyword(query, 20, f)
                assert [c.chunk_id for c, _ in got] == [c.chunk_id for c, _ in want], query
                assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)
    finally:
        sqlite.close()


def test_hnsw_above_the_threshold_finds_what_exact_search_finds(pg_url: str) -> None:
    exact = open_store(pg_url, home=Path("."))
    approx = open_store(pg_url.replace("?", "?hnsw_threshold=150&"), home=Path("."))
    try:
        small = [update(f"d{d}", [f"doc {d} part {i}" for i in range(10)], scope=f"s{d % 3}")
                 for d in range(6)]  # fmt: skip
        kb = approx.create("kb")
        kb.apply(small)  # 120 windows: still exact
        assert not _hnsw_indexes(pg_url)
        kb.apply([update(f"e{d}", [f"more {d} part {i}" for i in range(10)]) for d in range(4)])
        assert _hnsw_indexes(pg_url) == ["windows_hnsw_1"]
        for trial in range(5):
            q = unit(f"query{trial}")[0]
            want = exact.open("kb").dense(q, 10)
            got = kb.dense(q, 10)
            assert [c.chunk_id for c, _ in got] == [c.chunk_id for c, _ in want]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-5)
            only = kb.dense(q, 5, SearchFilter(scope="s1"))
            assert len(only) == 5 and {c.scope for c, _ in only} == {"s1"}
        # The index matches the store's query (expression and predicate), so it can be used
        # (on 200 rows a sequential scan is cheaper: the planner needs a nudge to show it).
        with psycopg.connect(pg.server_url()) as conn:
            schema = pg_url.split("schema=")[1].split("&")[0]
            conn.execute(f'SET search_path TO "{schema}", public'.encode())
            for setting in ("seqscan", "bitmapscan", "sort"):
                conn.execute(f"SET enable_{setting} = off".encode())
            plan = conn.execute(
                f"EXPLAIN SELECT rid FROM windows WHERE kb_id = 1 ORDER BY "
                f"embedding::vector({DIM}) <=> '{list(map(float, unit('x')[0]))}'::vector({DIM}) "
                "LIMIT 10".encode()
            ).fetchall()
        assert "windows_hnsw_1" in " ".join(r[0] for r in plan)
        approx.drop("kb")
        assert not _hnsw_indexes(pg_url)
    finally:
        exact.close()
        approx.close()


def test_the_url_shapes_the_hnsw_build(pg_url: str) -> None:
    url = pg_url + "&hnsw_threshold=20&hnsw_m=8&ef_construction=40&build_workers=0"
    store = open_store(url, home=Path("."))
    try:
        store.create("kb").apply([update(f"d{d}", [f"doc {d} part {i}" for i in range(6)])
                                  for d in range(2)])  # fmt: skip
        assert _hnsw_indexes(pg_url) == ["windows_hnsw_1"]
        schema = pg_url.split("schema=")[1].split("&")[0]
        with psycopg.connect(pg.server_url()) as conn:
            row = conn.execute(
                "SELECT c.reloptions FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s",
                (schema, "windows_hnsw_1"),
            ).fetchone()
        assert row is not None and sorted(row[0]) == ["ef_construction=40", "m=8"]
    finally:
        store.close()


def _hnsw_indexes(url: str) -> list[str]:
    schema = url.split("schema=")[1].split("&")[0]
    with psycopg.connect(pg.server_url()) as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s "
            "AND indexname LIKE 'windows_hnsw%%'",
            (schema,),
        )
        return [r[0] for r in rows]


def test_the_schema_is_versioned_and_migrated_on_first_use(pg_url: str) -> None:
    off = open_store(pg_url + "&auto_migrate=false", home=Path("."))
    assert isinstance(off, PostgresStore)
    try:
        with pytest.raises(ConfigurationError, match="citewise store migrate"):
            off.names()
        assert off.schema_version() == 0
        assert off.migrate() == list(range(1, LATEST + 1)) and off.names() == []
    finally:
        off.close()
    store = open_store(pg_url, home=Path("."))
    assert isinstance(store, PostgresStore)
    try:
        assert store.migrate() == []  # already at the latest version
        open_store(pg_url + "&auto_migrate=0", home=Path(".")).close()
        schema = pg_url.split("schema=")[1]
        with psycopg.connect(pg.server_url(), autocommit=True) as conn:
            got = conn.execute(f'SELECT max(version) FROM "{schema}".schema_version'.encode())
            assert got.fetchone() == (LATEST,)
            conn.execute(f'INSERT INTO "{schema}".schema_version VALUES (999)'.encode())
        with pytest.raises(ConfigurationError, match="newer than this citewise"):
            open_store(pg_url, home=Path("."))
    finally:
        store.close()


@pytest.mark.parametrize(
    "query",
    [
        "schema=Bad-Name",
        "hnsw_threshold=x",
        "ef_search=0",
        "hnsw_threshold=0",
        "build_memory=1TB",
        "build_memory=1GB';--",
        "build_workers=-1",
        "build_workers=two",
        "hnsw_m=1",
        "hnsw_m=16&ef_construction=20",
        "ef_construction=2000",
    ],  # fmt: skip
)
def test_bad_url_options_are_refused_without_echoing_the_url(query: str) -> None:
    url = pg.server_url().replace("citewise@", "citewise:secret@") + "?" + query
    with pytest.raises(ConfigurationError) as err:
        open_store(url, home=Path("."))
    assert "secret" not in str(err.value)


def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    with pytest.raises(ConfigurationError, match="cannot connect to the PostgreSQL store") as err:
        open_store("postgresql://u:s3cret@127.0.0.1:9/citewise", home=Path("."))
    assert "127.0.0.1:9/citewise" in str(err.value) and "s3cret" not in str(err.value)


def test_the_postgres_alias_opens_the_same_store(store: Store, pg_url: str) -> None:
    store.create("kb").apply([update("a", ["alias text"])])
    other = open_store(pg_url.replace("postgresql://", "postgres://"), home=Path("."))
    try:
        assert other.names() == ["kb"]
        assert [c.text for c, _ in other.open("kb").keyword("alias", 3)] == ["alias text"]
    finally:
        other.close()


def test_the_write_lock_excludes_other_stores_until_released(store: Store, pg_url: str) -> None:
    other = open_store(pg_url, home=Path("."))
    events: list[str] = []
    try:
        with store.write_lock("kb"):
            thread = threading.Thread(target=lambda: _take(other, events))
            thread.start()
            time.sleep(0.3)
            events.append("first releases")
        thread.join(10)
        assert events == ["first releases", "second holds"]
        with other.write_lock("another"), store.write_lock("kb"):
            pass  # a different knowledge base's lock is independent
    finally:
        other.close()


def _take(store: Store, events: list[str]) -> None:
    with store.write_lock("kb"):
        events.append("second holds")


def test_many_writers_waiting_on_the_lock_do_not_starve_the_holder(store: Store) -> None:
    """More writers than pooled connections queue on one knowledge base's lock: all finish."""
    kb = store.create("kb")
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            with store.write_lock("kb"):
                kb.apply([update(f"w{i}", [f"writer {i}"])])
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(kb.documents()) == 12


def test_concurrent_applies_from_two_stores_lose_nothing(store: Store, pg_url: str) -> None:
    store.create("kb")
    other = open_store(pg_url, home=Path("."))

    def write(s: Store, prefix: str) -> None:
        for i in range(10):
            s.open("kb").apply([update(f"{prefix}{i}", [f"{prefix} text {i}", "shared words"])])

    try:
        threads = [threading.Thread(target=write, args=(s, p)) for s, p in
                   ((store, "a"), (other, "b"))]  # fmt: skip
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        kb = store.open("kb")
        assert len(kb.documents()) == 20 and len(kb.chunk_ids()) == 40
        assert len(kb.keyword("shared words", 100)) == 20
        assert len(kb.dense(unit("q")[0], 100)) == 40
    finally:
        other.close()


def test_a_reader_never_sees_half_an_apply(store: Store) -> None:
    kb = store.create("kb")
    kb.apply([update("base", ["base text"])])
    big = [update(f"n{i}", [f"batch text {i} {j}" for j in range(5)]) for i in range(40)]
    seen: set[int] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add(len(kb.keyword("batch", 1000)))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        kb.apply(big)
    finally:
        done.set()
        reader.join(10)
    assert seen <= {0, 200}
    wide = np.ones((1, DIM), dtype=np.float32) / np.sqrt(DIM)
    assert len(kb.dense(wide, 1000)) == 201
    assert DocumentUpdate  # the protocol's type, as the other store tests use it


def test_a_version_1_store_is_refused_until_migrated_then_ranks_identifiers(
    pg_url: str, tmp_path: Path
) -> None:
    fresh = open_store(pg_url, home=Path("."))
    updates = [update(f"i{n}", [text]) for n, text in enumerate(IDENTIFIER_TEXTS)]
    fresh.create("kb").apply(updates)
    want = {q: fresh.open("kb").keyword(q, 10) for q in IDENTIFIER_QUERIES}
    fresh.close()
    # Back to what citewise wrote before migration 2: no identifier postings, two lengths.
    to_version_3(pg_url)
    in_schema(
        pg_url,
        "DELETE FROM {s}.postings WHERE idx = 3",
        "UPDATE {s}.chunks SET lengths = lengths[1:2]",
        "UPDATE {s}.kbs SET tokens = tokens[1:2]",
        "DELETE FROM {s}.schema_version WHERE version >= 2",
        "ALTER TABLE {s}.documents DROP COLUMN metadata",
    )
    with pytest.raises(ConfigurationError, match="run `citewise store migrate`"):
        open_store(pg_url, home=Path("."))
    off = open_store(pg_url + "&auto_migrate=false", home=Path("."))
    assert isinstance(off, PostgresStore)
    try:
        assert off.migrate() == [2, 3, 4, 5]
    finally:
        off.close()
    store = open_store(pg_url, home=Path("."))
    try:
        assert {q: store.open("kb").keyword(q, 10) for q in IDENTIFIER_QUERIES} == want
    finally:
        store.close()


def test_migration_3_adds_document_metadata_in_place(pg_url: str) -> None:
    from dataclasses import replace

    store = open_store(pg_url, home=Path("."))
    first = update("a", ["Alpha text"])
    store.create("kb").apply([first])
    store.close()
    to_version_3(pg_url)
    in_schema(  # what version 2 wrote
        pg_url,
        "ALTER TABLE {s}.documents DROP COLUMN metadata",
        "DELETE FROM {s}.schema_version WHERE version = 3",
    )
    store = open_store(pg_url, home=Path("."))  # safe: migrated on first use
    try:
        assert isinstance(store, PostgresStore) and store.schema_version() == LATEST
        [kept] = store.open("kb").documents()
        assert kept.doc_id == "a" and kept.metadata == ()
        pairs = (("author", "Ada"), ("created", "2024-01-02"))
        second = update("b", ["Beta text"])
        second = replace(second, document=replace(second.document, metadata=pairs))
        store.open("kb").apply([second])
        assert {d.doc_id: d.metadata for d in store.open("kb").documents()} == {
            "a": (), "b": pairs,
        }  # fmt: skip
    finally:
        store.close()


def test_the_hnsw_graph_defaults_to_32_links_and_a_build_list_of_128() -> None:
    # 16 / 64 found 0.63 of the exact top 10 at 1M clustered windows (benchmarks/postgres-1m.md).
    options = parse_url("postgresql://u@localhost/db")
    assert (options.hnsw_m, options.ef_construction) == (32, 128)
    options = parse_url("postgresql://u@localhost/db?hnsw_m=16&ef_construction=64")
    assert (options.hnsw_m, options.ef_construction) == (16, 64)
