"""What only the SQLite engine promises: its files, transactions, caches and other processes."""

from __future__ import annotations

import fcntl
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from citewise.errors import KnowledgeBaseError
from citewise.store import DocumentUpdate, SearchFilter, SQLiteStore
from citewise.store import sqlite as sqlite_module
from citewise.store.cjk import cjk_grams
from citewise.store.columns import CHUNK_FIELDS
from citewise.store.sqlite import SQLiteKB
from citewise.store.sqlite_schema import rows_per_statement
from tests.store.support import (
    BASE,
    BASE_IDS,
    DIM,
    assert_base_intact,
    dense_ids,
    keyword_texts,
    unit,
    update,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "kbs")
    yield s
    s.close()


@pytest.fixture
def filled(store: SQLiteStore) -> SQLiteKB:
    kb = store.create("kb")
    kb.apply(BASE)
    return kb


def files(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def test_one_wal_file_per_kb_built_without_leftovers(store: SQLiteStore) -> None:
    store.create("docs-1").apply(BASE)
    path = store.root / "docs-1.sqlite"
    assert path.is_file()
    assert [n for n in files(store.root) if n.endswith(".tmp")] == []
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        meta = dict(conn.execute("SELECT key, value FROM meta"))
    conn.close()
    assert {
        "meta",
        "documents",
        "chunks",
        "vectors",
        "chunks_fts",
        "chunks_cjk",
        "chunks_ident",
    } <= tables
    # The store's own keys are in the file but never in meta().
    assert {"_schema", "_generation", "_dim"} <= set(meta)
    assert meta["_schema"] == "6" and meta["_dim"] == str(DIM)
    assert store.open("docs-1").meta() == {}


def test_a_rebuild_is_written_without_the_wal_then_switched_in_as_a_wal_file(
    store: SQLiteStore,
) -> None:
    store.create("kb").apply(BASE)
    with store.rebuild("kb") as new:
        new.apply(BASE)
        staging = new.store.root / "kb.sqlite"  # only the staging store has it open
        with sqlite3.connect(staging) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal"
        conn.close()
        assert not Path(f"{staging}-wal").exists()
    path = (store.root / "kb.sqlite").resolve()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    assert sorted(c.chunk_id for c in store.open("kb").get(store.open("kb").chunk_ids())) == (
        sorted(c.chunk_id for u in BASE for c in u.chunks)
    )


def test_drop_deletes_the_files(store: SQLiteStore, filled: SQLiteKB) -> None:
    store.create("other")
    store.drop("kb")
    assert [n for n in files(store.root) if n.startswith("kb.")] == []
    assert store.names() == ["other"]


def test_names_lists_only_valid_kb_files(store: SQLiteStore) -> None:
    store.create("kb")
    (store.root / "UPPER.sqlite").write_bytes(b"")
    (store.root / "folder.sqlite").mkdir()
    (store.root / "notes.txt").write_text("x")
    assert store.names() == ["kb"]
    assert not store.exists("folder")
    with pytest.raises(KnowledgeBaseError):
        store.open("folder")


def test_reading_unknown_or_dropped_kbs_never_creates_a_file(store: SQLiteStore) -> None:
    assert store.names() == [] and not store.root.exists()
    with pytest.raises(KnowledgeBaseError, match=r"\(known: none\)"):
        store.open("nope")
    assert not store.root.exists()
    kb = store.create("kb")
    store.drop("kb")
    for call in (kb.chunk_ids, kb.meta, lambda: kb.apply(BASE)):
        with pytest.raises(KnowledgeBaseError):
            call()
    assert files(store.root) == []


def test_failure_mid_apply_rolls_everything_back(
    filled: SQLiteKB, monkeypatch: pytest.MonkeyPatch
) -> None:
    filled.dense(unit("q")[0], 3)  # warm the cache: it must not survive the rollback
    calls = 0
    original = SQLiteStore._insert_vectors

    def failing(self: SQLiteStore, *args: object) -> None:
        nonlocal calls
        calls += 1
        original(self, *args)  # type: ignore[arg-type]
        # Every document, chunk and vector of the apply written, the removal not yet.
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(SQLiteStore, "_insert_vectors", failing)
    updates = [
        update("new-doc", ["Brand new page about telemetry"]),
        update("install", ["Fresh chunk"]),
    ]
    with pytest.raises(RuntimeError, match="disk on fire"):
        filled.apply(updates, removed_doc_ids=["auth"], meta={"embedder": "x"})
    assert calls == 1
    assert_base_intact(filled)


def test_reads_during_a_write_see_the_previous_state(
    filled: SQLiteKB, monkeypatch: pytest.MonkeyPatch
) -> None:
    written, release = threading.Event(), threading.Event()
    original = SQLiteStore._insert_vectors

    def slow(self: SQLiteStore, *args: object) -> None:
        original(self, *args)  # type: ignore[arg-type]
        written.set()
        assert release.wait(10)

    monkeypatch.setattr(SQLiteStore, "_insert_vectors", slow)
    writer = threading.Thread(
        target=filled.apply, args=([update("new-doc", ["telemetry page"])], ["auth"])
    )
    writer.start()
    try:
        assert written.wait(10)
        results: list[object] = []

        def read() -> None:
            results.append((filled.chunk_ids(), keyword_texts(filled, "telemetry rotate")))

        reader = threading.Thread(target=read)
        reader.start()
        reader.join(10)
        read()  # this thread too
        assert results == [(BASE_IDS, {"Rotate keys"})] * 2
        assert dense_ids(filled) == BASE_IDS
    finally:
        release.set()
        writer.join(10)
    assert keyword_texts(filled, "telemetry rotate") == {"telemetry page"}


def test_dense_matrix_is_loaded_once_until_a_write(store: SQLiteStore) -> None:
    # Speed is a benchmark's business; here we check the behaviour that makes it fast: the
    # vector matrix is read from disk once and reused until a write changes the index.
    rng = np.random.default_rng(3)
    u = update("d0", [f"doc chunk {i}" for i in range(20)])
    vecs = rng.standard_normal((len(u.chunks), 2, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=2, keepdims=True)
    kb = store.create("big")
    kb.apply([DocumentUpdate(u.document, u.chunks, dict(zip(u.vectors, vecs, strict=True)))])
    q = rng.standard_normal(DIM).astype(np.float32)
    kb.dense(q, 5)
    first = store._dense["big"]
    for _ in range(3):
        kb.dense(q, 5, SearchFilter(page_prefix=""))
        store.open("big").dense(q, 5)  # another handle shares the engine's cache
        assert store._dense["big"] is first
    kb.apply([update("d1", ["fresh chunk"])], removed_doc_ids=["d0"])
    assert [c.text for c, _ in kb.dense(q, 5)] == ["fresh chunk"]
    assert store._dense["big"] is not first


def test_dense_sees_writes_from_another_store_instance(filled: SQLiteKB) -> None:
    before = dense_ids(filled)
    other = SQLiteStore(filled.store.root)
    other.open("kb").apply([update("later", ["Later page"])])
    other.close()
    assert dense_ids(filled) - before == filled.chunk_ids() - before != set()


def test_a_drop_by_another_process_is_noticed(store: SQLiteStore, filled: SQLiteKB) -> None:
    assert dense_ids(filled) == BASE_IDS  # this thread now holds a connection and a matrix
    other = SQLiteStore(store.root)
    other.drop("kb")
    with pytest.raises(KnowledgeBaseError, match="unknown knowledge base 'kb'"):
        filled.chunk_ids()
    # Re-created elsewhere with other content: the handle reads the new file, not the old one.
    other.create("kb").apply([update("later", ["Later page"])])
    other.close()
    assert keyword_texts(filled, "later pip") == {"Later page"}
    assert [c.text for c, _ in filled.dense(unit("q")[0], 9)] == ["Later page"]


def test_write_lock_is_a_file_lock_across_processes(store: SQLiteStore) -> None:
    lock_file = store.root / ".kb.lock"

    def try_lock() -> bool:
        # flock conflicts between open file descriptions, as another process's would.
        with lock_file.open("a") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            return True

    with store.write_lock("kb"):
        assert lock_file.is_file() and not try_lock()
        with SQLiteStore(store.root).write_lock("other"):
            pass
    assert try_lock()
    assert store.names() == []


def test_keyword_top_k_unfiltered_equals_the_joined_form_ties_included(store: SQLiteStore) -> None:
    # Without a filter FTS5 takes the top k before the join (store/sqlite_keyword.py); a
    # filter admitting every document takes the joined form. Equal texts score equally, so
    # which tied rows make the cut and their order must agree between the two forms.
    kb = store.create("kb")
    docs = [f"d{i:02d}" for i in range(12)]
    kb.apply([update(d, ["rotate the keys", "rotate keys and the server port"]) for d in docs])
    everything = SearchFilter(doc_ids=tuple(docs))
    for k in (1, 5, 13, 30):
        plain = [(c.chunk_id, s) for c, s in kb.keyword("rotate keys", k)]
        joined = [(c.chunk_id, s) for c, s in kb.keyword("rotate keys", k, everything)]
        assert plain == joined
        assert len(plain) == min(k, 24)


def test_an_apply_keeps_within_the_sqlite_builds_parameter_limit(store: SQLiteStore) -> None:
    kb = store.create("kb")
    conn = store._conn("kb")
    # 30 parameters: two chunks a statement (a build of SQLite before 3.32 allows 999), and
    # ten window vectors: the first document's six chunks have twelve.
    conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 30)
    assert rows_per_statement(conn, 1000, len(CHUNK_FIELDS)) == 2
    assert rows_per_statement(conn, 500, 3) == 10
    updates = [
        update(
            "one", [f"{word} widget" for word in ("alpha", "beta", "gamma", "eta", "iota", "zeta")]
        ),
        update("two", ["delta widget", "epsilon widget"]),
    ]
    kb.apply(updates[:1])
    kb.apply(updates[1:])
    assert [c.text for c, _ in kb.keyword("widget", 10)] != []
    with store._read("kb") as read:
        texts = [row[0] for row in read.execute("SELECT text FROM chunks ORDER BY rid")]
        stored = {
            (chunk_id, window): bytes(blob)
            for chunk_id, window, blob in read.execute("SELECT * FROM vectors")
        }
    given = {
        (chunk_id, window): vector.tobytes()
        for u in updates
        for chunk_id, vectors in u.vectors.items()
        for window, vector in enumerate(vectors)
    }
    assert stored == given and len(given) == 16
    assert texts == [
        "alpha widget",
        "beta widget",
        "gamma widget",
        "eta widget",
        "iota widget",
        "zeta widget",
        "delta widget",
        "epsilon widget",
    ]


def test_an_apply_writes_its_chunks_in_batches_in_order(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_module, "_CHUNKS_PER_STATEMENT", 2)
    kb = store.create("kb")
    updates = [
        update("one", ["alpha widget", "beta widget", "gamma widget"]),
        update("two", ["delta widget", "检索 widget"]),
    ]
    kb.apply(updates)
    kb.apply([update("two", ["delta widget", "epsilon widget"])])  # one kept, one new
    order = [c.chunk_id for u in updates for c in u.chunks][:4]
    path = store.root / "kb.sqlite"
    with sqlite3.connect(path) as conn:
        conn.create_function("citewise_cjk_grams", 1, cjk_grams, deterministic=True)
        rows = [row[0] for row in conn.execute("SELECT chunk_id FROM chunks ORDER BY rid")]
        for table in ("chunks_fts", "chunks_cjk", "chunks_ident"):
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
        staged = conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchone()[0]
    conn.close()
    assert rows[:4] == order and len(rows) == 5  # rowids in the updates' order
    assert staged == 0  # nothing staged in another connection
    assert len(kb.keyword("widget", 10)) == 5
    assert [c.doc_id for c, _ in kb.keyword("检索", 5)] == []
