"""The store contract: every registered store engine must pass these tests.

The engines come from ``store_schemes()``, so one registered by a plugin or ``register_store``
before collection is tested too. Each test opens ``{scheme}://contract-<random>`` with the
test's tmp_path as home (a fresh SQLite folder, a fresh named memory store, ...); PostgreSQL
gets a fresh schema in the test server (``tests/pg.py``).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from citewise.errors import ConfigurationError, KnowledgeBaseError
from citewise.models import Chunk
from citewise.store import DocumentUpdate, KBStore, SearchFilter, Store, open_store, store_schemes
from citewise.store.ann import ann_available
from tests import pg
from tests.store.support import (
    BASE,
    BASE_IDS,
    CJK_TEXTS,
    DIM,
    IDENTIFIER_TEXTS,
    assert_base_intact,
    chunk,
    dense_ids,
    keyword_texts,
    texts_of,
    unit,
    update,
)


# "postgres" is an alias of "postgresql" (tests/store/test_postgres.py opens it).
@pytest.fixture(params=[s for s in store_schemes() if s != "postgres"] + ["sqlite-ann"])
def store_url(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "sqlite-ann":
        # The SQLite engine searching its ANN index (store/ann.py) from the first window.
        if not ann_available():
            pytest.skip("the ann extra (usearch) is not installed")
        yield f"sqlite://contract-{uuid.uuid4().hex[:12]}?ann_threshold=1"
        return
    if request.param == "postgresql":
        # A database server: a schema of its own per test (empty), dropped afterwards.
        url = pg.fresh_url()
        yield url
        pg.drop_schema(url)
        return
    yield f"{request.param}://contract-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def store(store_url: str, tmp_path: Path) -> Iterator[Store]:
    s = open_store(store_url, home=tmp_path)
    yield s
    for name in s.names():  # engines that outlive the test (memory, servers) start clean
        s.drop(name)
    s.close()


@pytest.fixture
def kb(store: Store) -> KBStore:
    return store.create("kb")


@pytest.fixture
def filled(kb: KBStore) -> KBStore:
    kb.apply(BASE)
    return kb


# -- apply / replace / remove ------------------------------------------------------------------


def test_apply_stores_documents_chunks_and_vectors(store: Store, filled: KBStore) -> None:
    assert filled.name == "kb"
    assert [d.doc_id for d in filled.documents()] == ["auth", "install"]
    assert filled.documents()[1] == BASE[0].document
    assert filled.chunk_ids() == BASE_IDS
    assert dense_ids(filled) == BASE_IDS
    wanted = [BASE[1].chunks[1].chunk_id, "missing", BASE[0].chunks[0].chunk_id]
    assert filled.get(wanted) == [BASE[1].chunks[1], BASE[0].chunks[0]]
    assert filled.get([]) == []
    assert store.exists("kb") and store.names() == ["kb"]


def test_reapply_replaces_changed_chunks_and_keeps_unchanged_ones(filled: KBStore) -> None:
    old = BASE[0].chunks
    new = update("install", ["Install with pip", "Set the server port", "Upgrade"])
    # Vectors offered for the unchanged chunk must be ignored: it keeps its stored ones.
    vectors = dict(new.vectors) | {old[0].chunk_id: unit("other", 2)}
    filled.apply([DocumentUpdate(new.document, new.chunks, vectors)])

    assert filled.chunk_ids() >= {c.chunk_id for c in new.chunks}
    assert old[1].chunk_id not in filled.chunk_ids()
    assert keyword_texts(filled, "configure") == set()
    assert keyword_texts(filled, "upgrade") == {"Upgrade"}
    assert old[1].chunk_id not in dense_ids(filled)
    (best, score), *_ = filled.dense(unit(old[0].chunk_id, 2)[1], 1)
    assert best.chunk_id == old[0].chunk_id and score == pytest.approx(1.0, abs=1e-6)
    assert texts_of(filled.neighbours(new.chunks[1].chunk_id, 5)) == [
        "Install with pip",
        "Set the server port",
        "Upgrade",
    ]


def test_apply_refreshes_metadata_of_unchanged_chunks(filled: KBStore) -> None:
    kept = BASE[0].chunks[0]
    moved = Chunk(**{**kept.__dict__, "url": "https://new.example/#a0", "scope": "moved"})
    filled.apply([DocumentUpdate(BASE[0].document, [moved, *BASE[0].chunks[1:]], {})])
    assert filled.get([kept.chunk_id]) == [moved]
    assert keyword_texts(filled, "pip") == {"Install with pip"}
    assert [c.chunk_id for c, _ in filled.dense(unit("q")[0], 9, SearchFilter("moved"))] == [
        kept.chunk_id
    ]


def test_a_stored_chunk_whose_text_changes_keeps_its_vectors(filled: KBStore) -> None:
    c = BASE[0].chunks[0]
    changed = Chunk(**{**c.__dict__, "text": "Install with uv"})
    filled.apply([DocumentUpdate(BASE[0].document, [changed, BASE[0].chunks[1]], {})])
    assert keyword_texts(filled, "pip") == set()
    assert keyword_texts(filled, "uv") == {"Install with uv"}
    (best, score), *_ = filled.dense(unit(c.chunk_id, 2)[0], 1)
    assert best == changed and score == pytest.approx(1.0, abs=1e-6)


def test_a_new_chunk_needs_vectors(filled: KBStore) -> None:
    extra = chunk("install", 9, "Extra notes")
    chunks = [*BASE[0].chunks, extra]
    with pytest.raises(ValueError, match="no vectors"):
        filled.apply([DocumentUpdate(BASE[0].document, chunks, {})])
    filled.apply([DocumentUpdate(BASE[0].document, chunks, {extra.chunk_id: unit("extra")[0]})])
    assert filled.get([extra.chunk_id]) == [extra]
    assert len(filled.chunk_ids()) == 5
    assert extra.chunk_id in dense_ids(filled)


def test_removed_documents_are_gone_everywhere(filled: KBStore) -> None:
    filled.apply([], removed_doc_ids=["auth", "never-existed"])
    assert [d.doc_id for d in filled.documents()] == ["install"]
    assert filled.get([c.chunk_id for c in BASE[1].chunks]) == []
    assert keyword_texts(filled, "authentication keys rotate") == set()
    assert dense_ids(filled) == {c.chunk_id for c in BASE[0].chunks}
    assert filled.neighbours(BASE[1].chunks[0].chunk_id, 1) == []


def test_removing_twice_or_an_unknown_document_is_harmless(filled: KBStore) -> None:
    filled.apply(removed_doc_ids=["auth"])
    filled.apply(removed_doc_ids=["auth", "absent"])
    assert keyword_texts(filled, "rotate") == set()
    assert dense_ids(filled) == filled.chunk_ids() == {c.chunk_id for c in BASE[0].chunks}


def test_removals_run_after_the_updates(filled: KBStore) -> None:
    filled.apply([update("later", ["Later page"])], removed_doc_ids=["later", "auth"])
    assert [d.doc_id for d in filled.documents()] == ["install"]
    assert keyword_texts(filled, "later") == set()


def test_apply_merges_meta_in_the_same_write(store: Store, filled: KBStore) -> None:
    filled.apply([update("x", ["x page"])], meta={"embedder": "m1", "scopes": "a"})
    filled.apply(meta={"site_url": "https://x/", "scopes": "a b"})
    assert filled.meta() == {"embedder": "m1", "site_url": "https://x/", "scopes": "a b"}
    with pytest.raises(ValueError, match="reserved"):
        filled.apply(meta={"_generation": "0"})
    with pytest.raises(ValueError, match="reserved"):
        store.create("kb", {"_schema": "9"})
    with pytest.raises(ValueError, match="reserved"):
        store.create("fresh", {"_dim": "3"})
    assert not store.exists("fresh")
    assert filled.meta()["scopes"] == "a b"


def test_new_chunk_without_vectors_fails_before_any_write(filled: KBStore) -> None:
    good = update("new-doc", ["Brand new page about telemetry"])
    bad = update("install", ["Install with pip", "Fresh chunk"], skip=frozenset({"Fresh chunk"}))
    with pytest.raises(ValueError, match="no vectors"):
        filled.apply([good, bad], removed_doc_ids=["auth"], meta={"embedder": "x"})
    assert_base_intact(filled)


def _foreign_chunk() -> DocumentUpdate:
    u = update("new-doc", ["Brand new page about telemetry"])
    stray = chunk("auth", 7, "Fresh chunk")
    return DocumentUpdate(u.document, [*u.chunks, stray], {stray.chunk_id: unit("s"), **u.vectors})


def _twice() -> DocumentUpdate:
    u = update("new-doc", ["Brand new page about telemetry"])
    return DocumentUpdate(u.document, [*u.chunks, u.chunks[0]], u.vectors)


def _wide() -> DocumentUpdate:
    u = update("new-doc", ["Brand new page about telemetry", "Fresh chunk"])
    wide = {cid: np.ones((1, DIM + 1), dtype=np.float32) for cid in u.vectors}
    return DocumentUpdate(u.document, u.chunks, wide)


@pytest.mark.parametrize(
    ("bad", "message"),
    [(_foreign_chunk, "belongs to 'auth'"), (_twice, "appears twice"), (_wide, "dim")],
)
def test_invalid_updates_fail_before_any_write(
    filled: KBStore, bad: Callable[[], DocumentUpdate], message: str
) -> None:
    good = update("other", ["Brand new page about telemetry"])
    with pytest.raises(ValueError, match=message):
        filled.apply([good, bad()], removed_doc_ids=["auth"], meta={"embedder": "x"})
    assert_base_intact(filled)


def test_vector_dimension_must_match(filled: KBStore) -> None:
    u = update("other", ["text"])
    wide = {cid: np.ones((1, DIM + 1), dtype=np.float32) for cid in u.vectors}
    with pytest.raises(ValueError, match="dim"):
        filled.apply([DocumentUpdate(u.document, u.chunks, wide)])
    with pytest.raises(ValueError, match="dim"):
        filled.dense(np.ones(DIM + 1, dtype=np.float32), 3)


# -- knowledge bases ---------------------------------------------------------------------------


def test_unknown_kb_raises_and_creates_nothing(store: Store, filled: KBStore) -> None:
    for call in (lambda: store.open("nope"), lambda: store.drop("nope")):
        with pytest.raises(
            KnowledgeBaseError, match=r"unknown knowledge base 'nope' \(known: kb\)"
        ):
            call()
    assert store.names() == ["kb"] and not store.exists("nope")


def test_a_dropped_kb_raises_on_every_read_and_write(store: Store, filled: KBStore) -> None:
    store.create("other")
    store.drop("kb")
    calls: list[Callable[[], object]] = [
        lambda: filled.apply(BASE),
        lambda: filled.apply(meta={"embedder": "x"}),
        lambda: filled.apply(),
        lambda: filled.get(["x"]),
        lambda: filled.dense(unit("q")[0], 3),
        lambda: filled.keyword("pip", 3),
        lambda: filled.documents(),
        lambda: filled.chunk_ids(),
        lambda: filled.meta(),
        lambda: filled.neighbours("x", 1),
        lambda: store.drop("kb"),
        lambda: store.open("kb"),
    ]
    for call in calls:
        with pytest.raises(
            KnowledgeBaseError, match=r"unknown knowledge base 'kb' \(known: other\)"
        ):
            call()
    assert store.names() == ["other"] and not store.exists("kb")


@pytest.mark.parametrize("name", ["", "UPPER", "-dash", ".hidden", "a/b", "../etc", "a b",
                                  "x" * 65, "é", "kb\n"])  # fmt: skip
def test_bad_kb_names_are_rejected(store: Store, name: str) -> None:
    def lock() -> None:
        with store.write_lock(name):
            pass

    calls: list[Callable[[], object]] = [
        lambda: store.open(name),
        lambda: store.create(name),
        lambda: store.exists(name),
        lambda: store.drop(name),
        lock,
    ]
    for call in calls:
        with pytest.raises(ConfigurationError, match="invalid knowledge base name") as err:
            call()
        assert repr(name) in str(err.value)
    assert store.names() == []


def test_dotted_kb_names_are_valid(store: Store) -> None:
    store.create("lgos-0.12.0").apply(BASE)
    assert store.names() == ["lgos-0.12.0"] and store.exists("lgos-0.12.0")
    assert store.open("lgos-0.12.0").chunk_ids() == BASE_IDS


def test_create_list_and_drop(store: Store) -> None:
    assert store.names() == []
    b = store.create("b-kb", {"embedder": "m"})
    assert b.name == "b-kb"
    b.apply(BASE)
    a = store.create("a_kb")
    again = store.create("b-kb")  # idempotent: content and meta kept
    assert again.meta() == {"embedder": "m"} and again.chunk_ids() == BASE_IDS
    store.create("b-kb", {"site_url": "https://x/"})  # merges meta into the existing one
    assert store.open("b-kb").meta() == {"embedder": "m", "site_url": "https://x/"}
    assert store.names() == ["a_kb", "b-kb"]
    assert a.documents() == [] and a.chunk_ids() == set() and a.meta() == {}
    assert a.dense(unit("q")[0], 5) == [] and a.keyword("anything", 5) == []
    assert a.get(["x"]) == [] and a.neighbours("x", 2) == []
    store.drop("b-kb")
    assert store.names() == ["a_kb"] and not store.exists("b-kb")
    with pytest.raises(KnowledgeBaseError):
        store.open("b-kb")


def test_a_recreated_kb_starts_empty(store: Store, filled: KBStore) -> None:
    assert dense_ids(filled) and keyword_texts(filled, "pip")  # warm any cache
    store.drop("kb")
    fresh = store.create("kb", {"embedder": "new"})
    assert fresh.chunk_ids() == set() and fresh.documents() == []
    assert fresh.dense(unit("q")[0], 5) == [] and fresh.keyword("pip", 5) == []
    assert fresh.meta() == {"embedder": "new"}
    # A handle names its knowledge base: the old one now works on the new knowledge base.
    assert filled.meta() == {"embedder": "new"} and filled.chunk_ids() == set()
    # A new dimension is fine: the old vectors went with the old knowledge base.
    u = update("wide", ["wide vectors"])
    fresh.apply(
        [
            DocumentUpdate(
                u.document, u.chunks, {u.chunks[0].chunk_id: np.ones(DIM + 2, dtype=np.float32)}
            )
        ]
    )
    assert [c.text for c, _ in fresh.dense(np.ones(DIM + 2, dtype=np.float32), 1)] == [
        "wide vectors"
    ]


def test_handles_and_openings_of_the_same_url_share_the_data(
    store: Store, store_url: str, tmp_path: Path, filled: KBStore
) -> None:
    other = store.open("kb")
    other.apply([update("later", ["Later page"])], meta={"embedder": "m"})
    assert keyword_texts(filled, "later") == {"Later page"}
    assert len(dense_ids(filled)) == 5 and filled.meta() == {"embedder": "m"}
    second = open_store(store_url, home=tmp_path)
    try:
        assert second.names() == ["kb"]
        second.open("kb").apply(removed_doc_ids=["later"])
        assert dense_ids(filled) == BASE_IDS and keyword_texts(filled, "later") == set()
    finally:
        second.close()


def test_neighbours_are_a_window_in_document_order(kb: KBStore) -> None:
    u = update("long", [f"part {i}" for i in range(6)])
    kb.apply([BASE[0], u])
    ids = [c.chunk_id for c in u.chunks]
    assert texts_of(kb.neighbours(ids[2], 1)) == ["part 1", "part 2", "part 3"]
    assert texts_of(kb.neighbours(ids[0], 2)) == ["part 0", "part 1", "part 2"]
    assert texts_of(kb.neighbours(ids[4], 3)) == ["part 1", "part 2", "part 3", "part 4", "part 5"]
    assert texts_of(kb.neighbours(ids[5], 0)) == ["part 5"]
    assert texts_of(kb.neighbours(ids[5], -1)) == ["part 5"]
    assert kb.neighbours("unknown", 2) == []


# -- search ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    ['"what\'s c++?"', "AND OR NOT", "*", '"unbalanced', "NEAR(a b)", "col:pip", "a^b", "(", "",
     "-pip", "pip*", "'; DROP TABLE chunks; --", "\x00", "🙂 emoji", "ÄPI", "字", "x" * 5000,
     " ".join(f"w{i}" for i in range(500))],
)  # fmt: skip
def test_hostile_keyword_queries_never_raise(filled: KBStore, query: str) -> None:
    hits = filled.keyword(query, 5)
    assert len(hits) <= 5 and all(score > 0 for _, score in hits)
    assert filled.chunk_ids() == BASE_IDS


def test_k_of_zero_or_less_finds_nothing(filled: KBStore) -> None:
    for k in (0, -1):
        assert filled.dense(unit("q")[0], k) == []
        assert filled.keyword("pip keys", k) == []


def test_keyword_hits_are_the_chunks_as_written(kb: KBStore) -> None:
    # Every field, whichever path answers (the SQLite store's matrix builds them by column
    # position and shares parsed heading paths); with identifiers and a filter (FTS5 there).
    written = update("keys", ["Rotate the keys", "Rotate `api_keys` often", "Other text"])
    nested = replace(written.chunks[2], heading_path=("Guide", "Keys › Rotation"), page_number=3)
    kb.apply([DocumentUpdate(written.document, [*written.chunks[:2], nested], written.vectors)])
    stored = {c.chunk_id: c for c in [*written.chunks[:2], nested]}
    for query, f in (
        ("rotate", None),
        ("api_keys", None),
        ("rotate other", SearchFilter(doc_ids=("keys",))),
    ):
        hits = kb.keyword(query, 10, f)
        assert hits, query
        assert all(c == stored[c.chunk_id] for c, _ in hits), query
        assert all(type(s) is float for _, s in hits)
    assert [c for c, _ in kb.keyword("other", 1)] == [nested]


def test_keyword_search_stems_ranks_and_folds_diacritics(kb: KBStore) -> None:
    kb.apply(
        [
            update("a", ["Configuring servers and the server port", "Nothing relevant"]),
            update("b", ["A café note on servers"]),
            update("c", ["The what and the how"]),
        ]
    )
    hits = kb.keyword("How do I configure a server?", 10)
    assert [c.text for c, _ in hits][0] == "Configuring servers and the server port"
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert all(s > 0 for _, s in hits)
    assert keyword_texts(kb, "server") == {
        "Configuring servers and the server port",
        "A café note on servers",
    }
    assert keyword_texts(kb, "cafe") == {"A café note on servers"}
    assert keyword_texts(kb, "CAFÉ") == {"A café note on servers"}
    # Only stopwords: they are kept rather than matching nothing.
    assert keyword_texts(kb, "what how") == {"The what and the how"}


def test_keyword_ranks_rarer_and_more_frequent_terms_higher(kb: KBStore) -> None:
    kb.apply(
        [
            update("d", ["proxy proxy proxy setup", "proxy setup", "setup guide", "setup notes"]),
            update("e", ["setup and more setup words here", "unrelated text"]),
        ]
    )
    ranked = [c.text for c, _ in kb.keyword("proxy setup", 10)]
    # "proxy" is rarer than "setup", so any chunk with it outranks those with "setup" only.
    assert ranked[:2] == ["proxy proxy proxy setup", "proxy setup"]
    assert set(ranked[2:]) == {"setup guide", "setup notes", "setup and more setup words here"}
    assert [c.text for c, _ in kb.keyword("proxy setup", 1)] == ranked[:1]


def test_chinese_queries_find_chinese_chunks(kb: KBStore) -> None:
    kb.apply([update(doc, [text]) for doc, text in CJK_TEXTS.items()])
    ranked = [c.doc_id for c, _ in kb.keyword("删除文档要依靠哪个字段？", 5)]
    assert ranked[0] == "delete" and "weather" not in ranked
    assert [c.doc_id for c, _ in kb.keyword("vector_weight 有什么作用", 5)][0] == "weight"
    assert [c.doc_id for c, _ in kb.keyword("天气", 5)] == ["weather"]
    assert [c.doc_id for c, _ in kb.keyword("scheduler cluster jobs", 5)] == ["english"]
    kb.apply(removed_doc_ids=["delete"])
    assert kb.keyword("删除文档", 5) == []


def test_filters_apply_before_top_k(filled: KBStore) -> None:
    target = BASE[0].chunks[1]  # scope "", page getting-started/
    query = unit(target.chunk_id, 2)[0]
    auth = {c.chunk_id for c in BASE[1].chunks}
    cases = [
        (SearchFilter(scope="guides"), auth),
        (SearchFilter(page_prefix="guides/"), auth),
        (SearchFilter(page_prefix="guides/auth/"), auth),
        (SearchFilter(page_prefix="GUIDES/"), set()),
        (SearchFilter(page_prefix="guides%"), set()),
        (SearchFilter(page_prefix=""), BASE_IDS),
        (SearchFilter(doc_ids=("auth",)), auth),
        (SearchFilter(doc_ids=("auth", "install")), BASE_IDS),
        (SearchFilter(doc_ids=()), set()),
        (SearchFilter(scope="guides", doc_ids=("install",)), set()),
        (SearchFilter(), BASE_IDS),
    ]

    def best(ids: set[str]) -> list[str]:
        return sorted(ids, key=lambda cid: -float(np.max(unit(cid, 2) @ query)))[:1]

    assert filled.dense(query, 1)[0][0] == target
    for f, allowed in cases:
        # k=1 and the best overall match is excluded: post-filtering would return nothing.
        assert [c.chunk_id for c, _ in filled.dense(query, 1, f)] == best(allowed), f
        kw = filled.keyword("pip port authentication keys", 1, f)
        assert len(kw) == min(1, len(allowed)) and {c.chunk_id for c, _ in kw} <= allowed, f
        everything = filled.keyword("pip port authentication keys", 10, f)
        assert {c.chunk_id for c, _ in everything} == allowed, f
        assert {c.chunk_id for c, _ in filled.dense(query, 10, f)} == allowed, f


def test_scope_filter_matches_a_member_of_a_scope_list(kb: KBStore) -> None:
    """A chunk's scope may list several names (``tutorials library``): each one matches."""
    kb.apply(
        [
            update("demo", ["Demo compose stack"], scope="demo", page="demo/"),
            update("tut", ["Tutorial compose stack"], scope="tutorials library", page="t/"),
            update("home", ["Home compose stack"], scope="library", page=""),
            update("libs", ["Libraries compose stack"], scope="libraries", page="l/"),
        ]
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
        assert {c.doc_id for c, _ in kb.dense(unit("q")[0], 10, f)} == docs, scope
        assert {c.doc_id for c, _ in kb.keyword("compose stack", 10, f)} == docs, scope


def test_dense_is_exact_against_brute_force(kb: KBStore) -> None:
    rng = np.random.default_rng(7)
    updates, windows = [], {}
    for d in range(20):
        u = update(f"d{d}", [f"doc {d} part {i}" for i in range(10)], scope=f"s{d % 3}")
        vecs = {}
        for c in u.chunks:
            v = rng.standard_normal((int(rng.integers(1, 4)), DIM)).astype(np.float32)
            vecs[c.chunk_id] = windows[c.chunk_id] = v / np.linalg.norm(v, axis=1, keepdims=True)
        updates.append(DocumentUpdate(u.document, u.chunks, vecs))
    kb.apply(updates)
    scopes = {c.chunk_id: c.scope for u in updates for c in u.chunks}
    for trial in range(5):
        q = unit(f"query{trial}")[0]
        expected = sorted(((float(np.max(w @ q)), cid) for cid, w in windows.items()), reverse=True)
        got = kb.dense(q, 15)
        assert [c.chunk_id for c, _ in got] == [cid for _, cid in expected[:15]]
        assert [s for _, s in got] == pytest.approx([s for s, _ in expected[:15]], abs=1e-5)
        only = [(s, cid) for s, cid in expected if scopes[cid] == "s1"][:7]
        got = kb.dense(q, 7, SearchFilter(scope="s1"))
        assert [c.chunk_id for c, _ in got] == [cid for _, cid in only]
    assert len(kb.dense(unit("q")[0], 1000)) == 200


def test_a_single_vector_is_one_window(kb: KBStore) -> None:
    u = update("flat", ["one window"])
    vector = unit("flat")[0]
    kb.apply([DocumentUpdate(u.document, u.chunks, {u.chunks[0].chunk_id: vector})])
    (hit, score), *_ = kb.dense(vector, 1)
    assert hit == u.chunks[0] and score == pytest.approx(1.0, abs=1e-6)


# -- concurrency -------------------------------------------------------------------------------


def test_concurrent_readers_and_writer_see_consistent_snapshots(kb: KBStore) -> None:
    def version(n: int) -> DocumentUpdate:
        return update("doc", [f"version{n} chunk{i}" for i in range(5)])

    kb.apply([version(0)])
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                texts = [c.text for c, _ in kb.dense(unit("q")[0], 50)]
                assert len(texts) == 5 and len({t.split()[0] for t in texts}) == 1
                kw = {c.text.split()[0] for c, _ in kb.keyword("chunk3", 10)}
                assert len(kw) == 1
        except BaseException as exc:  # reported to the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for n in range(1, 15):
        kb.apply([version(n)])
    stop.set()
    for t in threads:
        t.join(10)
    assert errors == []
    assert keyword_texts(kb, "chunk3") == {"version14 chunk3"}


def test_write_lock_serializes_writers_of_one_kb_only(store: Store) -> None:
    entered = {name: threading.Event() for name in ("kb", "other")}

    def take(name: str) -> None:
        with store.write_lock(name):
            entered[name].set()

    # Taken before the knowledge base exists: an ingest holds it while creating it.
    with store.write_lock("kb"):
        waiting = threading.Thread(target=take, args=("kb",))
        free = threading.Thread(target=take, args=("other",))
        waiting.start()
        free.start()
        assert entered["other"].wait(10)
        assert not entered["kb"].wait(0.2)
    waiting.join(10)
    free.join(10)
    assert entered["kb"].is_set()
    assert store.names() == []


def test_an_identifier_in_the_query_ranks_the_chunks_holding_it_first(kb: KBStore) -> None:
    kb.apply([update(f"i{n}", [text]) for n, text in enumerate(IDENTIFIER_TEXTS)])
    # The prose chunk uses "API", "prefix", "OpenAI" and "LGOS" more often than the table
    # that defines the variable; the variable, as a whole term, decides.
    for query in ("LGOS_OPENAI_API_PREFIX", "What is lgos_openai_api_prefix for?"):
        hits = kb.keyword(query, 10)
        assert [c.doc_id for c, _ in hits][:2] == ["i0", "i1"], query
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert kb.keyword("api prefix", 1)[0][0].doc_id == "i1"  # words alone: BM25 as before
    assert kb.keyword("Session.mount", 1)[0][0].doc_id == "i2"  # part of a dotted path
    assert kb.keyword("json()", 1)[0][0].doc_id == "i2"
    assert kb.keyword("--site-url", 1)[0][0].doc_id == "i3"
    assert [c.doc_id for c, _ in kb.keyword("get_settings", 5)] == ["i4"]
    # An identifier no chunk holds changes nothing: its words rank as usual.
    assert [c.doc_id for c, _ in kb.keyword("LGOS_API_PREFIX", 2)] == [
        c.doc_id for c, _ in kb.keyword("LGOS API PREFIX", 2)
    ]
    kb.apply(removed_doc_ids=["i0"])
    assert "i0" not in {c.doc_id for c, _ in kb.keyword("LGOS_OPENAI_API_PREFIX", 10)}


# -- rebuild: the new knowledge base built beside the old one, switched in whole ----------------

NEW = [update("fresh", ["Telemetry is fresh", "Rebuilt from scratch"])]
NEW_IDS = {c.chunk_id for u in NEW for c in u.chunks}


def test_a_rebuild_replaces_the_whole_knowledge_base_in_one_step(
    store: Store, filled: KBStore
) -> None:
    reader = store.open("kb")
    with store.rebuild("kb", {"embedder": "other"}) as new:
        new.apply(NEW, meta={"site_url": "https://new.example"})
        # Until the block ends, everyone sees the old knowledge base, whole.
        assert_base_intact(reader)
        assert store.names() == ["kb"]
    assert store.names() == ["kb"]
    for handle in (reader, store.open("kb")):
        assert [d.doc_id for d in handle.documents()] == ["fresh"]
        assert handle.chunk_ids() == NEW_IDS
        assert dense_ids(handle) == NEW_IDS
        assert keyword_texts(handle, "telemetry") == {"Telemetry is fresh"}
        assert keyword_texts(handle, "rotate") == set()
        assert handle.meta() == {"embedder": "other", "site_url": "https://new.example"}


def test_a_failed_rebuild_leaves_the_old_knowledge_base_and_nothing_else(
    store: Store, filled: KBStore
) -> None:
    with pytest.raises(RuntimeError), store.rebuild("kb") as new:
        new.apply(NEW)
        raise RuntimeError("the build failed")
    assert store.names() == ["kb"]
    assert_base_intact(store.open("kb"))
    # The next rebuild works (nothing of the failed one is in its way).
    with store.rebuild("kb") as new:
        new.apply(NEW)
    assert store.open("kb").chunk_ids() == NEW_IDS
    assert store.names() == ["kb"]


def test_a_rebuild_creates_a_missing_knowledge_base_only_when_it_completes(store: Store) -> None:
    with pytest.raises(RuntimeError), store.rebuild("made") as new:
        new.apply(NEW)
        raise RuntimeError("the build failed")
    assert store.names() == [] and not store.exists("made")
    with store.rebuild("made", {"embedder": "x"}) as new:
        new.apply(NEW)
        assert not store.exists("made")
    assert store.names() == ["made"]
    assert store.open("made").chunk_ids() == NEW_IDS
    store.drop("made")
    assert store.names() == []
