"""The Store contract: every store implementation must pass these tests (SQLite for now)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from citewise.embedding.base import Vectors
from citewise.errors import ConfigurationError, KnowledgeBaseError
from citewise.models import Chunk, Document
from citewise.store import DocumentUpdate, SearchFilter, SQLiteStore, Store, get_store

DIM = 16

# Each entry builds a fresh, empty store rooted in a test's tmp_path. Postgres joins here.
STORE_FACTORIES: dict[str, Callable[[Path], Store]] = {
    "sqlite": lambda tmp: SQLiteStore(tmp / "kbs"),
}


@pytest.fixture(params=sorted(STORE_FACTORIES))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = STORE_FACTORIES[request.param](tmp_path)
    yield s
    s.close()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "kbs")
    yield s
    s.close()


def unit(seed: str, n: int = 1) -> Vectors:
    rng = np.random.default_rng(int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16))
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    norms: Vectors = np.linalg.norm(v, axis=1, keepdims=True).astype(np.float32)
    return v / norms


def chunk(doc: str, pos: int, text: str, *, scope: str = "", page: str = "") -> Chunk:
    digest = hashlib.sha256(f"{doc}|{pos}|{text}".encode()).hexdigest()[:12]
    return Chunk(
        chunk_id=f"{doc}-{pos}-{digest}",
        doc_id=doc,
        position=pos,
        section_index=pos,
        text=text,
        title=f"{doc} title",
        heading_path=("Guide", doc),
        anchor=f"a{pos}",
        url=f"https://docs.example/{page}#a{pos}",
        page=page,
        scope=scope,
    )


def update(
    doc: str,
    texts: list[str],
    *,
    scope: str = "",
    page: str = "",
    skip: frozenset[str] = frozenset(),
) -> DocumentUpdate:
    """A full update for ``doc``; chunks whose text is in ``skip`` get no vectors."""
    chunks = [chunk(doc, i, t, scope=scope, page=page) for i, t in enumerate(texts)]
    vectors = {c.chunk_id: unit(c.chunk_id, 2) for c in chunks if c.text not in skip}
    document = Document(
        doc, f"{doc} title", f"https://docs.example/{page}", page, "h-" + doc, scope
    )
    return DocumentUpdate(document, chunks, vectors)


def texts_of(chunks: list[Chunk]) -> list[str]:
    return [c.text for c in chunks]


def keyword_texts(store: Store, query: str, kb: str = "kb") -> set[str]:
    return {c.text for c, _ in store.keyword(kb, query, 100)}


def dense_ids(store: Store, kb: str = "kb") -> set[str]:
    return {c.chunk_id for c, _ in store.dense(kb, unit("q"), 1000)}


BASE = [
    update("install", ["Install with pip", "Configure the server port"], page="getting-started/"),
    update("auth", ["API key authentication", "Rotate keys"], scope="guides", page="guides/auth/"),
]


@pytest.fixture
def filled(store: Store) -> Store:
    store.apply("kb", BASE)
    return store


# -- apply / replace / delete ----------------------------------------------------------------


def test_apply_stores_documents_chunks_and_vectors(filled: Store) -> None:
    assert [d.doc_id for d in filled.documents("kb")] == ["auth", "install"]
    ids = {c.chunk_id for u in BASE for c in u.chunks}
    assert filled.chunk_ids("kb") == ids
    assert dense_ids(filled) == ids
    wanted = [BASE[1].chunks[1].chunk_id, "missing", BASE[0].chunks[0].chunk_id]
    assert filled.get("kb", wanted) == [BASE[1].chunks[1], BASE[0].chunks[0]]
    assert filled.exists("kb") and "kb" in filled.list_kbs()


def test_reapply_replaces_changed_chunks_and_keeps_unchanged_ones(filled: Store) -> None:
    old = BASE[0].chunks
    new = update("install", ["Install with pip", "Set the server port", "Upgrade"])
    # Vectors offered for the unchanged chunk must be ignored: it keeps its stored ones.
    vectors = dict(new.vectors) | {old[0].chunk_id: unit("other", 2)}
    filled.apply("kb", [DocumentUpdate(new.document, new.chunks, vectors)])

    assert filled.chunk_ids("kb") >= {c.chunk_id for c in new.chunks}
    assert old[1].chunk_id not in filled.chunk_ids("kb")
    assert keyword_texts(filled, "configure") == set()
    assert keyword_texts(filled, "upgrade") == {"Upgrade"}
    assert old[1].chunk_id not in dense_ids(filled)
    (best, score), *_ = filled.dense("kb", unit(old[0].chunk_id, 2)[1], 1)
    assert best.chunk_id == old[0].chunk_id and score == pytest.approx(1.0, abs=1e-6)
    assert texts_of(filled.neighbours("kb", new.chunks[1].chunk_id, 5)) == [
        "Install with pip",
        "Set the server port",
        "Upgrade",
    ]


def test_apply_refreshes_metadata_of_unchanged_chunks(filled: Store) -> None:
    kept = BASE[0].chunks[0]
    moved = Chunk(**{**kept.__dict__, "url": "https://new.example/#a0", "scope": "moved"})
    filled.apply("kb", [DocumentUpdate(BASE[0].document, [moved, *BASE[0].chunks[1:]], {})])
    assert filled.get("kb", [kept.chunk_id]) == [moved]
    assert keyword_texts(filled, "pip") == {"Install with pip"}


def test_removed_documents_are_gone_everywhere(filled: Store) -> None:
    filled.apply("kb", [], removed_doc_ids=["auth", "never-existed"])
    assert [d.doc_id for d in filled.documents("kb")] == ["install"]
    assert filled.get("kb", [c.chunk_id for c in BASE[1].chunks]) == []
    assert keyword_texts(filled, "authentication keys") == set()
    assert dense_ids(filled) == {c.chunk_id for c in BASE[0].chunks}


def test_delete_document_counts_chunks(filled: Store) -> None:
    assert filled.delete_document("kb", "auth") == 2
    assert filled.delete_document("kb", "auth") == 0
    assert filled.delete_document("kb", "absent") == 0
    assert keyword_texts(filled, "rotate") == set()
    assert dense_ids(filled) == {c.chunk_id for c in BASE[0].chunks}


def test_apply_merges_meta_atomically(filled: Store) -> None:
    filled.apply("kb", [], meta={"embedder": "m1"})
    filled.set_meta("kb", {"site_url": "https://x/"})
    assert filled.get_meta("kb") == {"embedder": "m1", "site_url": "https://x/"}
    with pytest.raises(ValueError, match="reserved"):
        filled.set_meta("kb", {"_generation": "0"})


def test_new_chunk_without_vectors_fails_before_any_write(filled: Store) -> None:
    good = update("new-doc", ["Brand new page about telemetry"])
    bad = update("install", ["Install with pip", "Fresh chunk"], skip=frozenset({"Fresh chunk"}))
    with pytest.raises(ValueError, match="no vectors"):
        filled.apply("kb", [good, bad], removed_doc_ids=["auth"], meta={"embedder": "x"})
    assert_base_intact(filled)


def assert_base_intact(store: Store) -> None:
    assert [d.doc_id for d in store.documents("kb")] == ["auth", "install"]
    ids = {c.chunk_id for u in BASE for c in u.chunks}
    assert store.chunk_ids("kb") == ids
    assert keyword_texts(store, "telemetry fresh") == set()
    assert keyword_texts(store, "rotate configure") == {"Rotate keys", "Configure the server port"}
    assert dense_ids(store) == ids
    assert "embedder" not in store.get_meta("kb")


def test_failure_mid_apply_rolls_everything_back(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.apply("kb", BASE)
    store.dense("kb", unit("q"), 3)  # warm any cache: it must not survive the rollback
    calls = 0
    if not isinstance(store, SQLiteStore):
        pytest.skip("mid-write fault injection is store specific")
    original = SQLiteStore._insert_vectors

    def failing(self: SQLiteStore, *args: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("disk on fire")
        original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(SQLiteStore, "_insert_vectors", failing)
    updates = [
        update("new-doc", ["Brand new page about telemetry"]),
        update("install", ["Fresh chunk"]),
    ]
    with pytest.raises(RuntimeError, match="disk on fire"):
        store.apply("kb", updates, removed_doc_ids=["auth"], meta={"embedder": "x"})
    assert calls == 2
    assert_base_intact(store)


def test_upsert_inserts_and_replaces_single_chunks(filled: Store) -> None:
    c = BASE[0].chunks[0]
    changed = Chunk(**{**c.__dict__, "text": "Install with uv"})
    filled.upsert("kb", [changed], {})  # keeps its stored vectors
    assert keyword_texts(filled, "pip") == set()
    assert keyword_texts(filled, "uv") == {"Install with uv"}
    assert c.chunk_id in dense_ids(filled)
    extra = chunk("install", 9, "Extra notes")
    with pytest.raises(ValueError, match="without vectors"):
        filled.upsert("kb", [extra], {})
    filled.upsert("kb", [extra], {extra.chunk_id: unit("extra")})
    assert filled.get("kb", [extra.chunk_id]) == [extra]
    assert len(filled.chunk_ids("kb")) == 5


def test_vector_dimension_must_match(filled: Store) -> None:
    u = update("other", ["text"])
    wide = {cid: np.ones((1, DIM + 1), dtype=np.float32) for cid in u.vectors}
    with pytest.raises(ValueError, match="dim"):
        filled.apply("kb", [DocumentUpdate(u.document, u.chunks, wide)])
    with pytest.raises(ValueError, match="dim"):
        filled.dense("kb", np.ones(DIM + 1, dtype=np.float32), 3)


# -- knowledge bases ---------------------------------------------------------------------------


def test_unknown_kb_reads_raise_and_create_nothing(filled: Store) -> None:
    reads: list[Callable[[], object]] = [
        lambda: filled.get("nope", ["x"]),
        lambda: filled.dense("nope", unit("q")[0], 3),
        lambda: filled.keyword("nope", "pip", 3),
        lambda: filled.documents("nope"),
        lambda: filled.chunk_ids("nope"),
        lambda: filled.get_meta("nope"),
        lambda: filled.neighbours("nope", "x", 1),
        lambda: filled.delete_document("nope", "x"),
        lambda: filled.drop("nope"),
    ]
    for read in reads:
        with pytest.raises(
            KnowledgeBaseError, match=r"unknown knowledge base 'nope' \(known: kb\)"
        ):
            read()
    assert filled.list_kbs() == ["kb"] and not filled.exists("nope")


@pytest.mark.parametrize("name", ["", "UPPER", "-dash", "a/b", "../etc", "a b", "x" * 65, "é"])
def test_bad_kb_names_are_rejected(store: Store, name: str) -> None:
    for call in (
        lambda: store.apply(name, BASE),
        lambda: store.documents(name),
        lambda: store.exists(name),
        lambda: store.create(name),
    ):
        with pytest.raises(ConfigurationError, match="invalid knowledge base name") as err:
            call()
        assert repr(name) in str(err.value)


def test_create_list_and_drop(store: Store) -> None:
    assert store.list_kbs() == []
    store.create("b-kb", {"embedder": "m"})
    store.create("a_kb")
    store.create("b-kb")  # idempotent, meta kept
    assert store.list_kbs() == ["a_kb", "b-kb"]
    assert store.get_meta("b-kb") == {"embedder": "m"}
    assert store.documents("a_kb") == []
    assert store.dense("a_kb", unit("q")[0], 5) == []
    assert store.keyword("a_kb", "anything", 5) == []
    store.drop("b-kb")
    assert store.list_kbs() == ["a_kb"] and not store.exists("b-kb")
    store.apply("b-kb", BASE)  # recreated implicitly by a write
    assert len(store.chunk_ids("b-kb")) == 4


def test_neighbours_are_a_window_in_document_order(store: Store) -> None:
    u = update("long", [f"part {i}" for i in range(6)])
    store.apply("kb", [u, BASE[0]])
    ids = [c.chunk_id for c in u.chunks]
    assert texts_of(store.neighbours("kb", ids[2], 1)) == ["part 1", "part 2", "part 3"]
    assert texts_of(store.neighbours("kb", ids[0], 2)) == ["part 0", "part 1", "part 2"]
    assert texts_of(store.neighbours("kb", ids[5], 0)) == ["part 5"]
    assert store.neighbours("kb", "unknown", 2) == []


# -- search ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    ['"what\'s c++?"', "AND OR NOT", "*", '"unbalanced', "NEAR(a b)", "col:pip", "a^b", "(", "",
     "-pip", "pip*", "'; DROP TABLE chunks; --", "\x00", "🙂 emoji", "ÄPI"],
)  # fmt: skip
def test_hostile_keyword_queries_never_raise(filled: Store, query: str) -> None:
    hits = filled.keyword("kb", query, 5)
    assert all(score > 0 for _, score in hits)
    assert len(filled.chunk_ids("kb")) == 4


def test_keyword_search_stems_ranks_and_folds_diacritics(store: Store) -> None:
    store.apply(
        "kb",
        [
            update("a", ["Configuring servers and the server port", "Nothing relevant"]),
            update("b", ["A café note on servers"]),
            update("c", ["The what and the how"]),
        ],
    )
    hits = store.keyword("kb", "How do I configure a server?", 10)
    assert [c.text for c, _ in hits][0] == "Configuring servers and the server port"
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert keyword_texts(store, "cafe") == {"A café note on servers"}
    # Only stopwords: they are kept rather than matching nothing.
    assert keyword_texts(store, "what how") == {"The what and the how"}


def test_filters_apply_before_top_k(filled: Store) -> None:
    target = BASE[0].chunks[1]  # scope "", page getting-started/
    query = unit(target.chunk_id, 2)[0]
    cases = [
        (SearchFilter(scope="guides"), {c.chunk_id for c in BASE[1].chunks}),
        (SearchFilter(page_prefix="guides/"), {c.chunk_id for c in BASE[1].chunks}),
        (SearchFilter(page_prefix="GUIDES/"), set()),
        (SearchFilter(doc_ids=("auth",)), {c.chunk_id for c in BASE[1].chunks}),
        (SearchFilter(doc_ids=()), set()),
        (SearchFilter(scope="guides", doc_ids=("install",)), set()),
    ]

    def best(ids: set[str]) -> list[str]:
        return sorted(ids, key=lambda cid: -float(np.max(unit(cid, 2) @ query)))[:1]

    assert filled.dense("kb", query, 1)[0][0] == target
    for f, allowed in cases:
        # k=1 and the best overall match is excluded: post-filtering would return nothing.
        assert [c.chunk_id for c, _ in filled.dense("kb", query, 1, f)] == best(allowed)
        kw = filled.keyword("kb", "pip port authentication keys", 1, f)
        assert len(kw) == min(1, len(allowed)) and {c.chunk_id for c, _ in kw} <= allowed
        everything = filled.keyword("kb", "pip port authentication keys", 10, f)
        assert {c.chunk_id for c, _ in everything} == allowed


def test_scope_filter_matches_a_member_of_a_scope_list(store: Store) -> None:
    """A chunk's scope may list several names (``tutorials library``): each one matches."""
    store.apply(
        "kb",
        [
            update("demo", ["Demo compose stack"], scope="demo", page="demo/"),
            update("tut", ["Tutorial compose stack"], scope="tutorials library", page="t/"),
            update("home", ["Home compose stack"], scope="library", page=""),
            update("libs", ["Libraries compose stack"], scope="libraries", page="l/"),
        ],
    )
    cases = {
        "library": {"tut", "home"},
        "tutorials": {"tut"},
        "demo": {"demo"},
        "tutorials library": {"tut"},  # the stored string itself still matches exactly
        "lib": set(),
        "": set(),
    }
    for scope, docs in cases.items():
        f = SearchFilter(scope=scope)
        assert {c.doc_id for c, _ in store.dense("kb", unit("q"), 10, f)} == docs, scope
        assert {c.doc_id for c, _ in store.keyword("kb", "compose stack", 10, f)} == docs, scope


def test_dotted_kb_names_are_valid(store: Store) -> None:
    store.apply("lgos-0.12.0", BASE)
    assert "lgos-0.12.0" in store.list_kbs() and store.exists("lgos-0.12.0")


def test_dense_is_exact_against_brute_force(store: Store) -> None:
    rng = np.random.default_rng(7)
    updates, windows = [], {}
    for d in range(20):
        u = update(f"d{d}", [f"doc {d} part {i}" for i in range(10)], scope=f"s{d % 3}")
        vecs = {}
        for c in u.chunks:
            v = rng.standard_normal((int(rng.integers(1, 4)), DIM)).astype(np.float32)
            vecs[c.chunk_id] = windows[c.chunk_id] = v / np.linalg.norm(v, axis=1, keepdims=True)
        updates.append(DocumentUpdate(u.document, u.chunks, vecs))
    store.apply("kb", updates)
    scopes = {c.chunk_id: c.scope for u in updates for c in u.chunks}
    for trial in range(5):
        q = unit(f"query{trial}")[0]
        expected = sorted(((float(np.max(w @ q)), cid) for cid, w in windows.items()), reverse=True)
        got = store.dense("kb", q, 15)
        assert [c.chunk_id for c, _ in got] == [cid for _, cid in expected[:15]]
        assert [s for _, s in got] == pytest.approx([s for s, _ in expected[:15]], abs=1e-5)
        only = [(s, cid) for s, cid in expected if scopes[cid] == "s1"][:7]
        got = store.dense("kb", q, 7, SearchFilter(scope="s1"))
        assert [c.chunk_id for c, _ in got] == [cid for _, cid in only]


def test_dense_sees_writes_from_another_store_instance(filled: Store, tmp_path: Path) -> None:
    if not isinstance(filled, SQLiteStore):
        pytest.skip("sqlite specific")
    before = dense_ids(filled)
    other = SQLiteStore(filled.root)
    other.apply("kb", [update("later", ["Later page"])])
    other.close()
    assert dense_ids(filled) - before == set(filled.chunk_ids("kb")) - before != set()


# -- concurrency -------------------------------------------------------------------------------


def test_reads_during_a_write_see_the_previous_state(
    sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = sqlite_store
    store.apply("kb", BASE)
    written, release = threading.Event(), threading.Event()
    original = SQLiteStore._insert_vectors

    def slow(self: SQLiteStore, *args: object) -> None:
        original(self, *args)  # type: ignore[arg-type]
        written.set()
        assert release.wait(10)

    monkeypatch.setattr(SQLiteStore, "_insert_vectors", slow)
    writer = threading.Thread(
        target=store.apply, args=("kb", [update("new-doc", ["telemetry page"])], ["auth"])
    )
    writer.start()
    try:
        assert written.wait(10)
        results: list[object] = []

        def read() -> None:
            results.append((store.chunk_ids("kb"), keyword_texts(store, "telemetry rotate")))

        reader = threading.Thread(target=read)
        reader.start()
        reader.join(10)
        read()  # this thread too
        old_ids = {c.chunk_id for u in BASE for c in u.chunks}
        assert results == [(old_ids, {"Rotate keys"})] * 2
        assert dense_ids(store) == old_ids
    finally:
        release.set()
        writer.join(10)
    assert keyword_texts(store, "telemetry rotate") == {"telemetry page"}


def test_concurrent_readers_and_writer_see_consistent_snapshots(store: Store) -> None:
    def version(n: int) -> DocumentUpdate:
        return update("doc", [f"version{n} chunk{i}" for i in range(5)])

    store.apply("kb", [version(0)])
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                texts = [c.text for c, _ in store.dense("kb", unit("q")[0], 50)]
                assert len(texts) == 5 and len({t.split()[0] for t in texts}) == 1
                kw = {c.text.split()[0] for c, _ in store.keyword("kb", "chunk3", 10)}
                assert len(kw) == 1
        except BaseException as exc:  # reported to the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for n in range(1, 15):
        store.apply("kb", [version(n)])
    stop.set()
    for t in threads:
        t.join(10)
    assert errors == []
    assert keyword_texts(store, "chunk3") == {"version14 chunk3"}


# -- sqlite specifics --------------------------------------------------------------------------


def test_sqlite_layout_wal_and_registry(sqlite_store: SQLiteStore) -> None:
    import sqlite3

    sqlite_store.apply("docs-1", BASE)
    path = sqlite_store.root / "docs-1.sqlite"
    assert path.is_file()
    assert sorted(p.name for p in sqlite_store.root.iterdir() if p.name.endswith(".tmp")) == []
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert {"meta", "documents", "chunks", "vectors", "chunks_fts"} <= tables
    store = get_store("sqlite", root=sqlite_store.root)
    assert isinstance(store, SQLiteStore) and store.list_kbs() == ["docs-1"]
    store.close()
    with pytest.raises(ConfigurationError, match="unknown store 'nope'"):
        get_store("nope")


def test_sqlite_dense_matrix_is_loaded_once_until_a_write(sqlite_store: SQLiteStore) -> None:
    # Speed is a benchmark's business; here we check the behaviour that makes it fast: the
    # vector matrix is read from disk once and reused until a write changes the index.
    rng = np.random.default_rng(3)
    dim = DIM
    u = update("d0", [f"doc chunk {i}" for i in range(20)])
    vecs = rng.standard_normal((len(u.chunks), 2, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=2, keepdims=True)
    sqlite_store.apply(
        "big", [DocumentUpdate(u.document, u.chunks, dict(zip(u.vectors, vecs, strict=True)))]
    )
    q = rng.standard_normal(dim).astype(np.float32)
    sqlite_store.dense("big", q, 5)
    first = sqlite_store._dense["big"]
    for _ in range(3):
        sqlite_store.dense("big", q, 5, SearchFilter(page_prefix=""))
        assert sqlite_store._dense["big"] is first
    assert sqlite_store.delete_document("big", "d0") == 20
    sqlite_store.apply("big", [update("d1", ["fresh chunk"])])
    sqlite_store.dense("big", q, 5)
    assert sqlite_store._dense["big"] is not first
