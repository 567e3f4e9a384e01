"""The impact matrix's keyword scores against FTS5's own bm25() on the same file."""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from citewise.models import SearchFilter
from citewise.store import SQLiteStore, sqlite_impact, sqlite_impact_matrix
from citewise.store.sqlite import SQLiteKB
from citewise.store.sqlite_impact import build, tokens
from citewise.store.sqlite_keyword import keyword_rows

from .support import update

VOCAB = (
    "rotate rotating keys key server servers port ports install installing config configure "
    "token tokens cache cached caching index indexes query queries shard replica failover "
    "backup restore snapshot latency throughput"
).split()


def texts(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choices(VOCAB, k=rng.randint(1, 40))) for _ in range(n)]


def twenty_documents(
    tmp_path: Path, *, seed: int, background: bool
) -> tuple[SQLiteStore, SQLiteKB]:
    """A store in ``tmp_path`` with a knowledge base ``kb`` of 20 random documents."""
    rng = random.Random(seed)
    store = SQLiteStore(tmp_path, impacts_in_background=background)
    kb = store.create("kb")
    kb.apply([update(f"d{i:02d}", texts(rng, 3)) for i in range(20)])
    return store, kb


def hold_builds(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Matrix builds wait for the first event to be set; the second is set when one starts."""
    release, started = threading.Event(), threading.Event()
    real_build = sqlite_impact.build

    def held_build(conn: sqlite3.Connection, generation: str) -> sqlite_impact.ImpactIndex:
        started.set()
        assert release.wait(30), "the build was never released"
        return real_build(conn, generation)

    monkeypatch.setattr(sqlite_impact, "build", held_build)
    return release, started


def fts5(conn: sqlite3.Connection, text: str, k: int) -> list[tuple[str, float]]:
    rows = keyword_rows(conn, text, k, None)  # no impact matrix: FTS5 alone
    return [(r["chunk_id"], r["score"]) for r in rows]


def assert_same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    # Bit for bit (the sums are added in FTS5's order), so ties fall the same way too.
    assert got == want
    assert all(s == pytest.approx(t, rel=1e-9) for (_, s), (_, t) in zip(got, want, strict=True))


def compare(store: SQLiteStore, rng: random.Random, n: int = 40) -> int:
    """Random queries over VOCAB (common terms: the dense sum) and a rare pair (the sparse)."""
    kb = store.open("kb")
    # A connection of its own on the same file: FTS5's scores, as this store would read them.
    conn = sqlite3.connect(store._path("kb"))
    conn.row_factory = sqlite3.Row
    with conn:
        checked = 0
        queries = [" ".join(rng.sample(VOCAB, rng.randint(1, 6))) for _ in range(n)]
        for query in [*queries, "zeppelin quokka", "quokka running"]:
            for k in (1, 10, 1000):
                got = [(c.chunk_id, s) for c, s in kb.keyword(query, k)]
                want = fts5(conn, query, k)
                assert got, query
                assert_same(got, want)
                checked += len(got)
    conn.close()
    return checked


def test_scores_equal_fts5_bm25_before_and_after_adds_and_removals(tmp_path: Path) -> None:
    rng = random.Random(7)
    store = SQLiteStore(tmp_path, impacts_in_background=False)
    kb = store.create("kb")
    kb.apply([update(f"d{i:03d}", texts(rng, 5)) for i in range(60)])
    kb.apply([update("rare", ["zeppelin quokka", "quokka", "zeppelin runs"])])
    assert compare(store, rng) > 0
    # A new generation: more documents, some replaced, some removed (N, lengths, df all move).
    kb.apply([update(f"n{i:03d}", texts(rng, 3)) for i in range(30)])
    kb.apply([update(f"d{i:03d}", texts(rng, 2)) for i in range(0, 60, 3)])
    kb.apply([update(f"d{i:03d}", []) for i in range(1, 60, 3)])
    assert compare(store, rng) > 0
    store.close()


def test_the_matrix_answers_with_the_chunks_as_stored(tmp_path: Path) -> None:
    store, kb = twenty_documents(tmp_path, seed=5, background=False)
    hits = kb.keyword("rotate keys cache", 10)
    assert hits and "kb" in store._impacts._by_kb  # the matrix answered
    # Built by column position: the same chunks as ``get`` reads by column name.
    assert [c for c, _ in hits] == kb.get([c.chunk_id for c, _ in hits])
    assert all(type(s) is float for _, s in hits)
    store.close()


def test_the_matrix_follows_the_generation(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, impacts_in_background=False)
    kb = store.create("kb")
    kb.apply([update("a", ["rotate the keys"])])
    assert [c.doc_id for c, _ in kb.keyword("failover", 5)] == []
    kb.apply([update("b", ["failover to the replica"])])
    assert [c.doc_id for c, _ in kb.keyword("failover", 5)] == ["b"]
    kb.apply([update("b", [])])
    assert [c.doc_id for c, _ in kb.keyword("failover", 5)] == []
    store.close()


def test_filters_go_to_fts5_and_agree(tmp_path: Path) -> None:
    rng = random.Random(3)
    store = SQLiteStore(tmp_path, impacts_in_background=False)
    kb = store.create("kb")
    docs = [f"d{i:02d}" for i in range(20)]
    kb.apply([update(d, texts(rng, 4)) for d in docs])
    everything = SearchFilter(doc_ids=tuple(docs))
    for query in ("rotate keys", "cache latency snapshot", "server"):
        plain = [(c.chunk_id, s) for c, s in kb.keyword(query, 15)]
        filtered = [(c.chunk_id, s) for c, s in kb.keyword(query, 15, everything)]
        assert_same(plain, filtered)
    store.close()


def test_tokens_are_fts5s_own() -> None:
    assert tokens(["Running", "café", "rotate keys", ""]) == [
        ["run"],
        ["cafe"],
        ["rotat", "kei"],
        [],
    ]


def test_tokens_are_kept_per_term_and_the_cache_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[list[str]] = []
    real = sqlite_impact._tokenize

    def counted(terms: list[str]) -> list[tuple[str, ...]]:
        asked.append(terms)
        return real(terms)

    monkeypatch.setattr(sqlite_impact, "_tokenize", counted)
    monkeypatch.setattr(sqlite_impact, "_SPLITS", {})
    monkeypatch.setattr(sqlite_impact, "_SPLITS_MAX", 3)
    assert tokens(["Running", "café"]) == [["run"], ["cafe"]]
    # Only the new terms reach FTS5; each term's split is FTS5's whether cached or not.
    assert tokens(["café", "rotate keys", "", "Running"]) == [
        ["cafe"],
        ["rotat", "kei"],
        [],
        ["run"],
    ]
    assert asked == [["Running", "café"], ["rotate keys", ""]]
    assert len(sqlite_impact._SPLITS) <= 3
    assert tokens(["rotate keys", "Running", "Running"]) == [["rotat", "kei"], ["run"], ["run"]]


def test_build_counts_frequencies_and_lengths_from_fts5(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, impacts_in_background=False)
    kb = store.create("kb")
    kb.apply([update("a", ["keys keys keys", "keys server"])])
    with store._read("kb") as conn:
        index = build(conn, "g")
    assert len(index.rids) == 2
    row = index.terms["kei"]
    assert index.indptr[row + 1] - index.indptr[row] == 2
    store.close()


def test_postings_longer_than_a_batch_count_whole_and_score_as_fts5(tmp_path: Path) -> None:
    # Occurrences are read in batches: a chunk's run of one term across batch boundaries
    # is one posting with its whole count, and the chunk's length holds all of them.
    rng = random.Random(11)
    store = SQLiteStore(tmp_path, impacts_in_background=False)
    kb = store.create("kb")
    long = " ".join(["keys"] * (3 * sqlite_impact_matrix._BATCH + 17) + ["server"] * 40)
    kb.apply([update("long", [long]), *(update(f"d{i}", texts(rng, 3)) for i in range(30))])
    conn = sqlite3.connect(store._path("kb"))
    conn.row_factory = sqlite3.Row
    for query in ("keys", "server", "keys server rotate"):
        hits = kb.keyword(query, 1000)
        assert "long" in [c.doc_id for c, _ in hits]
        assert_same([(c.chunk_id, s) for c, s in hits], fts5(conn, query, 1000))
    conn.close()
    store.close()


def test_postings_out_of_order_are_merged_and_sorted() -> None:
    term = np.array([1, 0, 1, 0, 1], dtype=np.int32)
    doc = np.array([5, 9, 5, 2, 3], dtype=np.int64)
    freq = np.array([2, 1, 3, 4, 1], dtype=np.int64)
    t, d, f = sqlite_impact_matrix._postings(term, doc, freq)
    assert (t.tolist(), d.tolist(), f.tolist()) == ([0, 0, 1, 1], [2, 9, 3, 5], [4, 1, 1, 5])
    ordered = sqlite_impact_matrix._postings(t, d, f)
    assert [a.tolist() for a in ordered] == [t.tolist(), d.tolist(), f.tolist()]


def test_the_matrix_is_saved_beside_the_file_once_per_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, kb = twenty_documents(tmp_path, seed=11, background=False)
    first = kb.keyword("rotate keys cache", 10)
    saved = sorted((tmp_path / "kb.sqlite.impact").iterdir())
    assert len(saved) == 1 and (saved[0] / "impacts.npy").is_file()

    # Another store (another process, in effect) maps the saved matrix: same answers.
    def no_build(conn: sqlite3.Connection, generation: str) -> None:
        raise AssertionError("the saved matrix was rebuilt")

    with monkeypatch.context() as patch:
        patch.setattr(sqlite_impact, "build", no_build)
        other = SQLiteStore(tmp_path)
        found = other.open("kb").keyword("rotate keys cache", 10)
    assert [(c.chunk_id, s) for c, s in found] == [(c.chunk_id, s) for c, s in first]
    # Mapped, not read into memory, yet plain arrays (numpy's memmap is slow to slice).
    mapped = other._impacts._by_kb["kb"]
    for array in (mapped.indptr, mapped.positions, mapped.impacts, mapped.rids):
        assert type(array) is np.ndarray and isinstance(array.base, np.memmap)
    other.close()
    # A write is a new generation: its matrix replaces the old one's folder.
    kb.apply([update("new", ["zeppelin keys"])])
    assert [c.doc_id for c, _ in kb.keyword("zeppelin", 5)] == ["new"]
    assert [p.name for p in (tmp_path / "kb.sqlite.impact").iterdir()] != [saved[0].name]
    assert len(list((tmp_path / "kb.sqlite.impact").iterdir())) == 1
    assert store.names() == ["kb"]
    store.drop("kb")
    assert not (tmp_path / "kb.sqlite.impact").exists()
    store.close()


def test_the_first_search_after_a_write_never_waits_for_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The default: the matrix is built beside the searches.
    store, kb = twenty_documents(tmp_path, seed=5, background=True)
    release, started = hold_builds(monkeypatch)
    conn = sqlite3.connect(store._path("kb"))
    conn.row_factory = sqlite3.Row
    # FTS5 answers while the build is held (an inline build would block here for 30 s).
    first = [(c.chunk_id, s) for c, s in kb.keyword("rotate keys cache", 10)]
    assert started.wait(10) and first == fts5(conn, "rotate keys cache", 10)
    release.set()
    folder = tmp_path / "kb.sqlite.impact"
    deadline = time.monotonic() + 30
    while not any(folder.glob("*/terms.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(folder.glob("*/terms.json")), "the background build saved no matrix"
    # Then the matrix answers, with FTS5's scores.
    for query in ("rotate keys cache", "server port", "quokka"):
        got = [(c.chunk_id, s) for c, s in kb.keyword(query, 10)]
        assert_same(got, fts5(conn, query, 10))
    assert store._impacts._by_kb["kb"].generation
    conn.close()
    store.close()


def test_close_waits_for_a_background_build_and_nothing_is_saved_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store closed while its matrix is being built (a test's temporary folder removed, a
    # server stopping) must not have a thread write into the folder afterwards.
    store, kb = twenty_documents(tmp_path, seed=8, background=True)
    release, started = hold_builds(monkeypatch)
    assert kb.keyword("rotate keys", 5)  # FTS5 answers; the build starts
    assert started.wait(10)
    closer = threading.Thread(target=store.close)
    closer.start()
    closer.join(0.5)
    assert closer.is_alive(), "close() returned while a build was still running"
    release.set()
    closer.join(30)
    assert not closer.is_alive()
    assert not list((tmp_path / "kb.sqlite.impact").glob("**/terms.json"))
    # The store is usable again: the next search starts a build that completes.
    monkeypatch.undo()
    assert kb.keyword("rotate keys", 5)
    deadline = time.monotonic() + 30
    while not list((tmp_path / "kb.sqlite.impact").glob("*/terms.json")):
        assert time.monotonic() < deadline, "no build after the store was reopened"
        time.sleep(0.05)
    store.close()


def test_a_matrix_removed_before_it_is_read_is_built_again(tmp_path: Path) -> None:
    # A newer generation's save (or a rebuild) deletes the folders of older ones, possibly
    # between a reader seeing a folder and loading it.
    store, kb = twenty_documents(tmp_path, seed=9, background=False)
    first = kb.keyword("rotate keys cache", 10)
    (saved,) = (tmp_path / "kb.sqlite.impact").iterdir()
    (saved / "impacts.npy").unlink()  # a folder half removed: terms.json still there
    other = SQLiteStore(tmp_path, impacts_in_background=False)
    found = other.open("kb").keyword("rotate keys cache", 10)
    assert [(c.chunk_id, s) for c, s in found] == [(c.chunk_id, s) for c, s in first]
    other.close()
    store.close()


def test_a_matrix_saved_without_the_lengths_is_replaced_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder an older citewise saved (no lengths.npy) is built again and saved in its
    place: the next process maps it instead of building it again."""
    store, kb = twenty_documents(tmp_path, seed=5, background=False)
    first = kb.keyword("rotate keys cache", 10)
    (saved,) = (tmp_path / "kb.sqlite.impact").iterdir()
    (saved / "lengths.npy").unlink()
    again = SQLiteStore(tmp_path, impacts_in_background=False)
    assert [(c.chunk_id, s) for c, s in again.open("kb").keyword("rotate keys cache", 10)] == [
        (c.chunk_id, s) for c, s in first
    ]
    again.close()
    assert (saved / "lengths.npy").is_file()

    def no_build(conn: sqlite3.Connection, generation: str) -> None:
        raise AssertionError("the saved matrix was rebuilt")

    monkeypatch.setattr(sqlite_impact, "build", no_build)
    third = SQLiteStore(tmp_path, impacts_in_background=False)
    assert third.open("kb").keyword("rotate keys cache", 10)
    third.close()
    store.close()


def test_a_store_closed_from_its_own_build_thread_does_not_join_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store's finalizer runs on whichever thread collects it: the build thread included.
    store, kb = twenty_documents(tmp_path, seed=10, background=True)
    failures: list[BaseException] = []
    real_build = sqlite_impact.build
    searched = threading.Event()

    def closing_build(conn: sqlite3.Connection, generation: str) -> sqlite_impact.ImpactIndex:
        # As a finalizer would: once nothing else uses the store.
        assert searched.wait(30), "the search never returned"
        try:
            store.close()
        except BaseException as error:  # noqa: BLE001 - reported below, on the test's thread
            failures.append(error)
        return real_build(conn, generation)

    monkeypatch.setattr(sqlite_impact, "build", closing_build)
    assert kb.keyword("rotate keys", 5)
    searched.set()
    deadline = time.monotonic() + 30
    while store._impacts._building and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not store._impacts._building, "the build thread never finished"
    assert failures == []
    # Closed while building: the build is not kept and nothing is saved.
    assert not list((tmp_path / "kb.sqlite.impact").glob("**/terms.json"))
    assert "kb" not in store._impacts._by_kb
    store.close()


def test_filling_vectors_in_keeps_the_matrix_and_a_text_write_replaces_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A knowledge base written text first fills its vectors batch by batch: each batch is a
    # write, but none changes what the matrix was built from.
    store = SQLiteStore(tmp_path, impacts_in_background=False)
    kb = store.create("kb")
    given = update("guide", ["rotate the keys", "failover to the replica", "cache the token"])
    kb.apply([type(given)(given.document, given.chunks, {})], vectors_later=True)
    before = kb.keyword("replica keys", 5)
    saved = [p.name for p in (tmp_path / "kb.sqlite.impact").iterdir()]

    def no_build(conn: sqlite3.Connection, generation: str) -> None:
        raise AssertionError("the matrix was rebuilt after a vector fill")

    with monkeypatch.context() as patch:
        patch.setattr(sqlite_impact, "build", no_build)
        for chunk in given.chunks:
            kb.fill_vectors({chunk.chunk_id: given.vectors[chunk.chunk_id]})
            after = kb.keyword("replica keys", 5)
            assert [(c.chunk_id, s) for c, s in after] == [(c.chunk_id, s) for c, s in before]
        # Another store (another process) maps the same saved matrix.
        other = SQLiteStore(tmp_path)
        assert len(other.open("kb").keyword("replica keys", 5)) == len(before)
        other.close()
    assert [p.name for p in (tmp_path / "kb.sqlite.impact").iterdir()] == saved
    assert kb.vectors_missing() == 0

    kb.apply([update("new", ["zeppelin replica"])])
    assert [c.doc_id for c, _ in kb.keyword("zeppelin", 5)] == ["new"]
    assert [p.name for p in (tmp_path / "kb.sqlite.impact").iterdir()] != saved
    store.close()
