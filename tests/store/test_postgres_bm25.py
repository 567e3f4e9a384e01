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
from tests.store.pg_versions import to_version_3
from tests.store.support import update

WORDS = [f"w{i}" for i in range(40)]


@pytest.fixture
def small_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lists read a few postings at a time: several rounds on a test-sized corpus."""
    monkeypatch.setattr(bm25, "WHOLE", 3)
    monkeypatch.setattr(bm25, "FIRST", 2)
    monkeypatch.setattr(bm25, "GROWTH", 2)
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


def test_a_version_3_store_is_migrated_on_open_and_ranks_alike(pg_url: str) -> None:
    rng = random.Random(5)
    old = open_store(pg_url, home=Path("."))
    old.create("kb").apply(_corpus(rng, "a", 30))
    queries = ["w0 w1", "w2", "w5 w0 w9", "w3 w3"]
    want = {q: old.open("kb").keyword(q, 5) for q in queries}
    old.close()
    to_version_3(pg_url)
    store = open_store(pg_url, home=Path("."))  # safe: applied on open
    try:
        assert isinstance(store, PostgresStore) and store.schema_version() == 4 == LATEST
        _term_stats(pg_url)  # backfilled from the postings
        assert {q: store.open("kb").keyword(q, 5) for q in queries} == want
        store.open("kb").apply(_corpus(rng, "b", 5))
        _term_stats(pg_url)
        _assert_same(store, rng)
    finally:
        store.close()
