"""The PostgreSQL store's BM25 read best first (postgres_bm25): the same chunks and scores as
scoring every posting, its bound, term_stats kept by any writer, and the upgrade to it."""

from __future__ import annotations

import random
from pathlib import Path

import psycopg
import pytest

from citewise.models import Chunk, SearchFilter
from citewise.store import open_store
from citewise.store import postgres_bm25 as bm25
from citewise.store.postgres import PostgresStore
from citewise.store.postgres_schema import C_COLUMNS, LATEST, filter_sql, row_to_chunk
from citewise.store.postgres_terms import K1, B, bm25_sql, keyword_params
from tests import pg
from tests.store.pg_versions import to_version_3, to_version_4
from tests.store.support import update

WORDS = [f"w{i}" for i in range(40)]


@pytest.fixture
def small_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lists read a few postings at a time: several rounds on a test-sized corpus."""
    monkeypatch.setattr(bm25, "WHOLE", 3)
    monkeypatch.setattr(bm25, "FIRST", 2)
    monkeypatch.setattr(bm25, "GROWTH", 2)
    monkeypatch.setattr(bm25, "DEEP", 10**9)  # never start deeper than FIRST
    monkeypatch.setattr(bm25, "LOOKUP", 0)  # never give way to full scoring


def _text(rng: random.Random) -> str:
    # Zipf-like: low-numbered words are frequent, so queries mix frequent and rare terms.
    n = rng.randint(1, 40)
    return " ".join(WORDS[min(int(rng.paretovariate(0.7)) - 1, 39)] for _ in range(n))


def _corpus(rng: random.Random, prefix: str, docs: int) -> list:  # type: ignore[type-arg]
    return [
        update(f"{prefix}{d}", [_text(rng) for _ in range(rng.randint(1, 4))],
               scope="s" if d % 3 else "")
        for d in range(docs)
    ]  # fmt: skip


def _full_scoring(
    store: PostgresStore, kb: str, text: str, k: int, f: SearchFilter | None
) -> list[tuple[Chunk, float]]:
    """The query every posting is scored by (postgres_terms.BM25_SQL): the reference."""
    found = keyword_params(text)
    assert found is not None
    with store._read() as conn:
        info = store._kb_row(conn, kb)
        where, params = filter_sql(f)
        params |= found | {"kb": info["kb_id"], "k": k}
        rows = conn.execute(bm25_sql(where, C_COLUMNS).encode(), params).fetchall()
    return [(row_to_chunk(r[1:]), float(r[0])) for r in rows]


def _assert_same(store: PostgresStore, rng: random.Random) -> None:
    kb = store.open("kb")
    for _ in range(60):
        text = " ".join(rng.choice(WORDS[:20]) for _ in range(rng.randint(1, 4)))
        for f in (None, SearchFilter(scope="s")):
            k = rng.choice([1, 3, 10])
            more = _full_scoring(store, "kb", text, k + 10, f)
            want = more[:k]
            got = kb.keyword(text, k, f)
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9), text
            # Tied scores (the same terms, summed in another order) may differ in the last
            # bits and so in order; every other place is the same chunk.
            for (c, s), (w, _) in zip(got, want, strict=True):
                ties = [x for x, t in more if t == pytest.approx(s, rel=1e-12)]
                assert c.chunk_id == w.chunk_id or c in ties and w in ties, text


@pytest.mark.usefixtures("small_lists")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_full_scoring_before_and_after_adds_and_removals(
    store: PostgresStore, seed: int
) -> None:
    rng = random.Random(seed)
    kb = store.create("kb")
    kb.apply(_corpus(rng, "a", 40))
    _assert_same(store, rng)
    # Longer chunks move the mean length (the impact order's reference stays put).
    kb.apply(_corpus(rng, "b", 20), removed_doc_ids=[f"a{d}" for d in range(0, 40, 3)])
    _assert_same(store, rng)
    kb.apply([update("a1", ["w0 " * 200])], removed_doc_ids=["a2", "a4"])
    _assert_same(store, rng)


def _top_k(
    store: PostgresStore, text: str, k: int, f: SearchFilter | None, stats: dict[str, int]
) -> list[tuple[str, float]]:
    found = keyword_params(text)
    assert found is not None
    with store._read() as conn:
        info = store._kb_row(conn, "kb")
        where, params = filter_sql(f)
        top = bm25.top_k(conn, info, found["idx"], found["lo"], k, where, params, stats)  # type: ignore[arg-type]
        ids = dict(conn.execute("SELECT rid, chunk_id FROM chunks").fetchall())
    return [(ids[rid], score) for rid, score in top]


def _frequent_corpus(rng: random.Random, docs: int) -> list:  # type: ignore[type-arg]
    """Every chunk holds w0 (its idf at the floor); w1-w9 each in 45% to 15% of them (tf 1-4,
    lengths 5-60): scores crowd together, as frequent words' do in a large corpus."""
    out = []
    for d in range(docs):
        words = ["w0"] * rng.randint(1, 4)
        for j in range(1, 10):
            if rng.random() < 0.45 / j**0.5:
                words += [f"w{j}"] * rng.randint(1, 4)
        words += ["filler"] * rng.randint(2, 50)
        rng.shuffle(words)
        out.append(update(f"d{d}", [" ".join(words)], scope="s" if d % 2 else ""))
    return out


@pytest.mark.usefixtures("small_lists")
def test_chunks_ruled_out_by_their_bound_are_not_looked_up_and_change_nothing(
    store: PostgresStore,
) -> None:
    """The pruning of lookups is exercised (fewer chunks looked up than seen) and every
    query's top k, scores and order, is full scoring's: a bound too tight would drop a chunk
    of the top k, a floor too high would too."""
    rng = random.Random(11)
    store.create("kb").apply(_frequent_corpus(rng, 300))
    stats: dict[str, int] = {}
    for text in ["w0 w1", "w1 w0 w2", "w0 w3", "w2 w0 w1 w4", "w0 w0 w1", "w5 w1"]:
        for k in (1, 5, 20):
            for f in (None, SearchFilter(scope="s")):
                more = _full_scoring(store, "kb", text, k + 20, f)
                got = _top_k(store, text, k, f, stats)
                assert [s for _, s in got] == pytest.approx([s for _, s in more[:k]], rel=1e-9)
                for (chunk_id, score), (want, _) in zip(got, more, strict=False):
                    ties = {c.chunk_id for c, t in more if t == pytest.approx(score, rel=1e-12)}
                    assert chunk_id == want.chunk_id or {chunk_id, want.chunk_id} <= ties
    assert stats["rounds"] > 0 and stats["full_scoring"] == 0
    assert 0 < stats["looked_up"] < 0.8 * stats["seen"]  # about a third ruled out


@pytest.mark.usefixtures("small_lists")
def test_a_list_that_bounds_little_is_not_grown(store: PostgresStore) -> None:
    """w0 (in every chunk: idf at its floor) bounds almost nothing however deep it is read:
    the rounds grow w1's list and leave w0's at its first prefix."""
    store.create("kb").apply(_frequent_corpus(random.Random(12), 300))
    limits: list[list[int]] = []
    stats: dict[str, int] = {}
    with store._read() as conn:
        info = store._kb_row(conn, "kb")

        class Recording:
            def execute(self, query: bytes | str, params: object = None) -> object:
                if isinstance(params, dict) and "n" in params:
                    limits.append(list(params["n"]))
                return conn.execute(query, params)  # type: ignore[arg-type]

        bm25.top_k(Recording(), info, 0, ["w0", "w1"], 5, "true", {}, stats)  # type: ignore[arg-type]
    assert stats["rounds"] >= 2
    assert all(n[0] == limits[0][0] for n in limits) and limits[-1][1] > limits[0][1]


@pytest.mark.usefixtures("small_lists")
def test_a_round_costlier_than_full_scoring_gives_way_to_it(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bm25, "LOOKUP", 1)  # some queries go one way, some the other
    rng = random.Random(9)
    store.create("kb").apply(_corpus(rng, "a", 40))
    rounds: list[str] = []
    real = bm25.round_sql
    monkeypatch.setattr(bm25, "round_sql", lambda where: rounds.append(where) or real(where))
    _assert_same(store, rng)
    assert rounds  # some went best first


def test_the_lists_are_read_in_rounds_not_whole(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frequent term's list is read only as far as the top k needs."""
    monkeypatch.setattr(bm25, "WHOLE", 10)
    monkeypatch.setattr(bm25, "FIRST", 10)
    texts = ["common " * 10 + "rare"] + ["common filler words here"] * 300
    store.create("kb").apply([update(f"d{i}", [t]) for i, t in enumerate(texts)])
    rounds: list[str] = []
    real = bm25.round_sql

    def counting(where: str) -> str:
        rounds.append(where)
        return real(where)

    monkeypatch.setattr(bm25, "round_sql", counting)
    [(best, _)] = store.open("kb").keyword("common", 1)
    assert best.doc_id == "d0" and len(rounds) == 1  # the first 10 postings settle it


def test_the_bound_is_above_every_weight_it_bounds() -> None:
    rng = random.Random(7)
    for _ in range(20_000):
        tf, dl = rng.randint(1, 50), rng.randint(1, 2000)
        avgdl = rng.uniform(1, 1000)
        impact = tf / (tf + 0.3 + 0.009 * dl)
        weight = tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))
        assert weight <= bm25.rest_bound(impact, avgdl)
    assert bm25.rest_bound(0.0, 50.0) == 0.0


def _term_stats(url: str) -> set[tuple[int, int, str, int]]:
    schema = url.split("schema=")[1]
    with psycopg.connect(pg.server_url(), autocommit=True) as conn:
        stats = conn.execute(
            f'SELECT kb_id, idx, term, df FROM "{schema}".term_stats'.encode()
        ).fetchall()
        counted = conn.execute(
            f'SELECT kb_id, idx, term, count(*) FROM "{schema}".postings '
            "GROUP BY kb_id, idx, term".encode()
        ).fetchall()
    assert set(stats) == set(counted)
    return set(stats)


def test_term_stats_follow_every_write(store: PostgresStore, pg_url: str) -> None:
    rng = random.Random(4)
    kb = store.create("kb")
    kb.apply(_corpus(rng, "a", 20))
    assert _term_stats(pg_url)
    kb.apply(_corpus(rng, "b", 5), removed_doc_ids=["a1", "a3"])
    _term_stats(pg_url)
    with store.rebuild("kb") as fresh:
        fresh.apply(_corpus(rng, "c", 5))
    _term_stats(pg_url)
    store.create("other").apply(_corpus(rng, "o", 3))
    store.drop("kb")
    _term_stats(pg_url)
    store.drop("other")
    assert _term_stats(pg_url) == set()  # a dropped knowledge base leaves no rows


_MIGRATION_QUERIES = ["w0 w1", "w2", "w5 w0 w9", "w3 w3"]


def _ranked_by_a_new_store(pg_url: str, rng: random.Random) -> dict[str, object]:
    """A knowledge base of 30 documents written at the latest version: each query's hits."""
    old = open_store(pg_url, home=Path("."))
    old.create("kb").apply(_corpus(rng, "a", 30))
    want: dict[str, object] = {q: old.open("kb").keyword(q, 5) for q in _MIGRATION_QUERIES}
    old.close()
    return want


def test_a_version_3_store_is_migrated_on_open_and_ranks_alike(pg_url: str) -> None:
    rng = random.Random(5)
    want = _ranked_by_a_new_store(pg_url, rng)
    queries = _MIGRATION_QUERIES
    to_version_3(pg_url)
    store = open_store(pg_url, home=Path("."))  # safe: applied on open
    try:
        assert isinstance(store, PostgresStore) and store.schema_version() == 5 == LATEST
        _term_stats(pg_url)  # backfilled from the postings
        assert {q: store.open("kb").keyword(q, 5) for q in queries} == want
        store.open("kb").apply(_corpus(rng, "b", 5))
        _term_stats(pg_url)
        _assert_same(store, rng)
    finally:
        store.close()


def test_a_version_4_store_gets_the_covering_indexes_on_open_and_ranks_alike(pg_url: str) -> None:
    rng = random.Random(6)
    want = _ranked_by_a_new_store(pg_url, rng)
    queries = _MIGRATION_QUERIES
    to_version_4(pg_url)
    assert _indexes(pg_url) == {
        "postings_pkey": "(kb_id, idx, term, rid)",
        "postings_impact": "INCLUDE (rid)",
    }
    store = open_store(pg_url, home=Path("."))
    try:
        assert isinstance(store, PostgresStore) and store.schema_version() == 5
        assert _indexes(pg_url) == {
            "postings_pkey": "(kb_id, idx, term, rid) INCLUDE (tf, dl)",
            "postings_best": "INCLUDE (rid, tf, dl)",
        }
        assert {q: store.open("kb").keyword(q, 5) for q in queries} == want
        # Writes go on through the rebuilt primary key (a repeated key is still refused).
        store.open("kb").apply(_corpus(rng, "b", 5), removed_doc_ids=["a1"])
        _term_stats(pg_url)
        _assert_same(store, rng)
    finally:
        store.close()


def _indexes(url: str) -> dict[str, str]:
    """The postings table's indexes other than postings_rid: name and its key's tail."""
    schema = url.split("schema=")[1]
    with psycopg.connect(pg.server_url(), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s "
            "AND tablename = 'postings' AND indexname <> 'postings_rid'",
            (schema,),
        ).fetchall()
    tails = {}
    for name, definition in rows:
        tail = definition.split(" USING btree ")[1]
        tails[name] = tail if name == "postings_pkey" else tail[tail.index("INCLUDE") :]
    return tails
