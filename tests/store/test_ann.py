"""The SQLite store's approximate dense path (store/ann.py), forced on small knowledge bases."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from citewise.errors import ConfigurationError
from citewise.models import SearchFilter
from citewise.store import SQLiteStore, ann, open_store
from citewise.store.ann import ANN_ENV, AnnIndex, ann_available, index_path
from citewise.store.base import DocumentUpdate
from tests.store.support import DIM, update

pytestmark = pytest.mark.skipif(not ann_available(), reason="the ann extra (usearch)")


def docs(prefix: str, n: int, *, scope: str = "", page: str = "") -> list[DocumentUpdate]:
    return [
        update(f"{prefix}{i}", [f"{prefix} {i} part {j}" for j in range(5)], scope=scope, page=page)
        for i in range(n)
    ]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "kbs"


@pytest.fixture
def approx(root: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(root, ann_threshold=1)
    yield s
    s.close()


@pytest.fixture
def exact(root: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(root, ann_threshold=0)
    yield s
    s.close()


QUERIES = np.random.default_rng(7).standard_normal((25, DIM)).astype(np.float32)


def ranked(store: SQLiteStore, f: SearchFilter | None = None, k: int = 10) -> list[list[str]]:
    kb = store.open("kb")
    return [[c.chunk_id for c, _ in kb.dense(q, k, f)] for q in QUERIES]


def assert_same(approx: SQLiteStore, exact: SQLiteStore, f: SearchFilter | None = None) -> None:
    assert ranked(approx, f) == ranked(exact, f)
    assert isinstance(approx._dense["kb"], AnnIndex)


def test_the_ann_path_returns_the_exact_top_k(approx: SQLiteStore, exact: SQLiteStore) -> None:
    approx.create("kb").apply(docs("a", 40) + docs("b", 20, scope="guides", page="guides/"))
    assert_same(approx, exact)
    scores = [s for _, s in approx.open("kb").dense(QUERIES[0], 5)]
    want = [s for _, s in exact.open("kb").dense(QUERIES[0], 5)]
    assert scores == pytest.approx(want, abs=1e-5)  # rescored with the float vectors
    assert index_path(approx.root / "kb.sqlite").is_file()


def test_filters_still_apply(approx: SQLiteStore, exact: SQLiteStore) -> None:
    approx.create("kb").apply(docs("a", 60) + docs("b", 3, scope="guides", page="guides/"))
    for f in (
        SearchFilter(scope="guides"),  # selective: 15 of 315 chunks
        SearchFilter(page_prefix="guides/"),
        SearchFilter(doc_ids=["a3", "b1"]),
        SearchFilter(scope="nowhere"),
    ):
        assert_same(approx, exact, f)
    assert ranked(approx, SearchFilter(scope="nowhere")) == [[]] * len(QUERIES)


def test_an_ingest_that_adds_and_deletes_documents_updates_the_index(
    approx: SQLiteStore, exact: SQLiteStore
) -> None:
    kb = approx.create("kb")
    kb.apply(docs("a", 40))
    assert_same(approx, exact)
    first = approx._dense["kb"]
    kb.apply(docs("c", 10), removed_doc_ids=[f"a{i}" for i in range(0, 40, 3)])
    assert_same(approx, exact)
    assert approx._dense["kb"] is not first
    gone = {f"a{i}" for i in range(0, 40, 3)}
    assert not {c.doc_id for c, _ in kb.dense(QUERIES[1], 200)} & gone


def test_rowids_reused_by_new_windows_are_not_mistaken_for_old_ones(
    approx: SQLiteStore, exact: SQLiteStore
) -> None:
    kb = approx.create("kb")
    kb.apply(docs("a", 30))
    assert_same(approx, exact)
    # Deleting the last document frees the highest rowids; SQLite hands them to the next.
    kb.apply(removed_doc_ids=["a29"])
    kb.apply(docs("z", 1))
    assert_same(approx, exact)


def test_a_dropped_and_recreated_kb_gets_a_fresh_index(
    approx: SQLiteStore, exact: SQLiteStore
) -> None:
    approx.create("kb").apply(docs("a", 30))
    assert_same(approx, exact)
    approx.drop("kb")
    assert not index_path(approx.root / "kb.sqlite").exists()
    approx.create("kb").apply(docs("n", 12))
    assert_same(approx, exact)
    assert {c.doc_id[0] for c, _ in approx.open("kb").dense(QUERIES[0], 100)} == {"n"}


def _builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every ANN build or update from now on, by name (the real functions still run)."""
    calls: list[str] = []
    for name in ("_rebuild", "_update"):
        real = getattr(ann, name)

        def spy(*args: object, _real: object = real, _name: str = name) -> object:
            calls.append(_name)
            return _real(*args)  # type: ignore[operator]

        monkeypatch.setattr(ann, name, spy)
    return calls


@pytest.mark.parametrize("how", ["apply", "rebuild"])
def test_the_writer_builds_the_index_so_the_first_search_only_opens_it(
    root: Path, exact: SQLiteStore, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    writer = SQLiteStore(root, ann_threshold=1)
    calls = _builds(monkeypatch)
    if how == "apply":
        writer.create("kb").apply(docs("a", 30))
    else:
        with writer.write_lock("kb"), writer.rebuild("kb") as target:
            target.apply(docs("a", 30))
    writer.close()
    assert calls, "the write built no ANN index"
    calls.clear()
    # Another process's first search: the saved index is current, nothing is built.
    reader = SQLiteStore(root, ann_threshold=1)
    try:
        assert ranked(reader) == ranked(exact)
        assert isinstance(reader._dense["kb"], AnnIndex)
        assert calls == []
    finally:
        reader.close()


@pytest.mark.parametrize("damage", ["corrupt", "missing", "truncated"])
def test_a_damaged_or_missing_index_file_is_rebuilt(
    root: Path, exact: SQLiteStore, damage: str
) -> None:
    first = SQLiteStore(root, ann_threshold=1)
    first.create("kb").apply(docs("a", 30))
    want = ranked(exact)
    assert ranked(first) == want
    first.close()
    path = index_path(root / "kb.sqlite")
    if damage == "corrupt":
        path.write_bytes(b"not an index" * 100)
    elif damage == "missing":
        path.unlink()
    else:
        path.write_bytes(path.read_bytes()[:200])
    again = SQLiteStore(root, ann_threshold=1)
    try:
        assert ranked(again) == want
        assert isinstance(again._dense["kb"], AnnIndex)
    finally:
        again.close()


def test_below_the_threshold_search_is_exact(root: Path) -> None:
    store = SQLiteStore(root, ann_threshold=10_000)
    try:
        store.create("kb").apply(docs("a", 5))
        store.open("kb").dense(QUERIES[0], 3)
        assert not isinstance(store._dense["kb"], AnnIndex)
        assert not index_path(root / "kb.sqlite").exists()
    finally:
        store.close()


def test_without_usearch_search_is_exact_and_says_why(
    root: Path,
    exact: SQLiteStore,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # As if the ann extra were not installed.
    monkeypatch.setitem(sys.modules, "usearch", None)
    monkeypatch.setitem(sys.modules, "usearch.index", None)
    store = SQLiteStore(root, ann_threshold=1)
    try:
        store.create("kb").apply(docs("a", 10))
        with caplog.at_level(logging.WARNING):
            assert ranked(store) == ranked(exact)
        assert not isinstance(store._dense["kb"], AnnIndex)
        assert "citewise[ann]" in caplog.text
    finally:
        store.close()


def test_the_threshold_comes_from_the_url_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(f"sqlite:///{tmp_path}/a?ann_threshold=5", home=tmp_path)
    assert isinstance(store, SQLiteStore) and store.ann_threshold == 5
    monkeypatch.setenv(ANN_ENV, "7")
    assert SQLiteStore(tmp_path / "b").ann_threshold == 7
    for bad in ("?ann_threshold=many", "?ann_threshold=-1", "?other=1"):
        with pytest.raises(ConfigurationError):
            open_store(f"sqlite:///{tmp_path}/c{bad}", home=tmp_path)
