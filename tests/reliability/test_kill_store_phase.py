"""SIGKILL in the store phase of ``citewise index --rebuild`` and ``citewise doc add``: every
outcome is exactly the old knowledge base or the new one (documents, chunk and vector counts,
search results), on SQLite and, where a server can be started, PostgreSQL.

Each run is a forked child of a pre-imported process (``zygote.py``), so the harness spends
its time in the phase under test. The store phase starts when the run first changes the
knowledge base's files (``StoreWatch``; on PostgreSQL: when a run's rows appear); the kills
land at evenly spread delays after that, over the time a complete store phase took. Each run
rebuilds towards the version the knowledge base does not hold, so whichever state a kill
leaves, the next run starts from a known one.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import pytest

from citewise.store import SQLiteStore, Store
from tests import pg
from tests.reliability.hashing_cli import HashingEmbedder
from tests.reliability.store_runs import StoreWatch, Zygote, write_version

KILLS = 22
DOC_ADD_KILLS = 10
State = tuple[frozenset[tuple[str, str]], int, tuple[str, ...], tuple[str, ...]]


def search_state(store: Store) -> State:
    """What a reader of knowledge base ``x`` gets: its documents, chunk count and the top
    hits of a keyword and a dense search for words only one version has."""
    kb = store.open("x")
    docs = frozenset((d.doc_id, d.content_hash) for d in kb.documents())
    query = HashingEmbedder().embed_query("alpha12 omega42 widget")
    # Every keyword match (a cut could fall between equal scores), and the best dense scores.
    keyword = tuple(sorted(c.chunk_id for c, _ in kb.keyword("alpha12 omega42", 50)))
    dense = tuple(f"{score:.5f}" for _, score in kb.dense(query, 5))
    return docs, len(kb.chunk_ids()), keyword, dense


def sqlite_state(root: Path) -> State:
    db = root / "x.sqlite"
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        orphans = conn.execute(
            "SELECT count(*) FROM vectors WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)"
        ).fetchone()[0]
        assert orphans == 0, "vectors of chunks that are gone"
        chunked = {r[0] for r in conn.execute("SELECT DISTINCT doc_id FROM chunks")}
        assert chunked == {r[0] for r in conn.execute("SELECT doc_id FROM documents")}
    finally:
        conn.close()
    store = SQLiteStore(root)
    try:
        assert store.names() == ["x"]
        return search_state(store)
    finally:
        store.close()


class Watch(Protocol):
    def wait_started(self, timeout: float = 120.0) -> float: ...


class Harness:
    """Runs towards the other version, killed at spread points of the store phase."""

    def __init__(self, zygote: Zygote, env: dict[str, str], docs: dict[int, Path]) -> None:
        self.zygote, self.env, self.docs = zygote, env, docs

    def command(self, version: int, how: str) -> list[str]:
        if how == "rebuild":
            return ["index", str(self.docs[version]), "--kb", "x", "--rebuild", "-q"]
        return ["doc", "add", "--kb", "x", *map(str, sorted(self.docs[version].glob("*.md")))]

    def timed(self, version: int, how: str, watch: Callable[[], Watch]) -> float:
        """A complete run; how long its store phase took (``doc add``: the whole run, as its
        one transaction shows on disk only when it commits)."""
        seen = watch()
        began = time.monotonic()
        self.zygote.start(self.env, *self.command(version, how))
        if how == "rebuild":
            began = seen.wait_started()
        outcome = self.zygote.wait()
        assert outcome == "exit 0", outcome
        return time.monotonic() - began

    def kill_runs(
        self,
        how: str,
        kills: int,
        took: float,
        state: Callable[[], State],
        states: dict[int, State],
        watch: Callable[[], Watch],
    ) -> list[tuple[float, str, str]]:
        """``kills`` runs killed at delays spread over ``took`` after their store phase
        began: (delay, how it ended, which state it left)."""
        landed: list[tuple[float, str, str]] = []
        current = next(v for v, s in states.items() if s == state())
        killed = 0
        # Until ``kills`` runs were killed (a run quicker than the timed one ends first: the
        # remaining delays are then spread over less), within a bounded number of runs.
        while killed < kills and len(landed) < kills + 12:
            target = 3 - current
            seen = watch()
            pid = self.zygote.start(self.env, *self.command(target, how))
            delay = took * killed / (kills - 1) * (1.0 if how == "rebuild" else 0.95)
            if how == "rebuild":
                seen.wait_started()
            time.sleep(delay)
            with contextlib.suppress(ProcessLookupError):  # it ended (and was reaped)
                os.kill(pid, signal.SIGKILL)
            outcome = self.zygote.wait()
            if outcome == f"signal {signal.SIGKILL}":
                killed += 1
            else:
                took = max(delay * 0.9, 0.005)  # a store phase may take only milliseconds
            after = state()
            name = {states[1]: "v1", states[2]: "v2"}.get(after, "NEITHER")
            landed.append((round(delay, 3), outcome, name))
            if name == "NEITHER":
                docs = dict(after[0])
                print(
                    "left neither version: v1 docs",
                    sum(docs.get(d) == h for d, h in states[1][0]),
                    "v2 docs",
                    sum(docs.get(d) == h for d, h in states[2][0]),
                    "of",
                    len(docs),
                    "chunks",
                    after[1:],
                    states[1][1:],
                    states[2][1:],
                )
                break
            current = 1 if name == "v1" else 2
        return landed


def check(landed: list[tuple[float, str, str]], least: int, label: str) -> None:
    killed = sum(1 for _, outcome, _ in landed if outcome == f"signal {signal.SIGKILL}")
    print(f"{label}: {killed}/{len(landed)} runs killed;", landed)
    assert all(name != "NEITHER" for _, _, name in landed), landed
    assert killed >= least, f"only {killed} runs were killed before they ended: {landed}"
    assert len(landed) <= least + 12


@pytest.fixture
def zygote(tmp_path: Path) -> Iterator[Zygote]:
    z = Zygote(tmp_path / "zygote.log")
    yield z
    z.close()


@pytest.mark.slow
def test_kills_in_the_store_phase_leave_the_old_or_the_new_sqlite_kb(
    tmp_path: Path, zygote: Zygote
) -> None:
    home = tmp_path / "home"
    root = home / "kb"
    docs = {v: write_version(tmp_path / f"v{v}", v) for v in (1, 2)}
    harness = Harness(zygote, {"CITEWISE_HOME": str(home)}, docs)
    zygote.run(harness.env, *harness.command(1, "rebuild"))
    states = {1: sqlite_state(root)}
    took = harness.timed(2, "rebuild", lambda: StoreWatch(root))
    states[2] = sqlite_state(root)
    assert states[1] != states[2] and len(states[2][0]) == 30
    harness.timed(1, "rebuild", lambda: StoreWatch(root))  # both versions' vectors cached
    assert sqlite_state(root) == states[1]

    landed = harness.kill_runs(
        "rebuild", KILLS, took, lambda: sqlite_state(root), states, lambda: StoreWatch(root)
    )
    check(landed, KILLS, f"index --rebuild, killed in the store phase ({took:.2f}s)")

    # doc add: the same 30 file names, either version's content.
    harness.docs = {v: write_version(tmp_path / f"same{v}", v, same_pages=True) for v in (1, 2)}
    zygote.run(harness.env, *harness.command(1, "rebuild"))
    zygote.run(harness.env, *harness.command(1, "add"))  # the states doc add leaves
    added = {1: sqlite_state(root)}
    took_add = harness.timed(2, "add", lambda: StoreWatch(root))
    added[2] = sqlite_state(root)
    assert added[1] != added[2] and len(added[2][0]) == 30
    landed = harness.kill_runs(
        "add", DOC_ADD_KILLS, took_add, lambda: sqlite_state(root), added, lambda: StoreWatch(root)
    )
    check(landed, DOC_ADD_KILLS, f"doc add, killed over the whole run ({took_add:.2f}s)")

    # A last complete run leaves one generation, and nothing of the killed ones.
    harness.docs = docs
    zygote.run(harness.env, *harness.command(2, "rebuild"))
    assert sqlite_state(root) == states[2]
    assert len(list((root / ".generations" / "x").iterdir())) == 1
    assert sorted(p.name for p in root.iterdir() if not p.name.endswith("-shm")) in (
        [".generations", ".x.lock", "x.sqlite"],
        [".generations", ".x.lock", "x.sqlite", "x.sqlite-wal"],
    )


class RowWatch:
    """The store phase on PostgreSQL: the knowledge bases' rows change (a rebuild's new row
    appears, or the old one goes)."""

    def __init__(self, url: str) -> None:
        import psycopg

        from citewise.store.postgres_schema import parse_url

        options = parse_url(url)
        self._conn = psycopg.connect(options.conninfo, autocommit=True)
        self._query = f'SELECT name, kb_id FROM "{options.schema}".kbs'
        self.before = self._rows()

    def _rows(self) -> frozenset[tuple[str, int]]:
        return frozenset((r[0], r[1]) for r in self._conn.execute(self._query.encode()))

    def wait_started(self, timeout: float = 120.0) -> float:
        deadline = time.monotonic() + timeout
        try:
            while self._rows() == self.before:
                if time.monotonic() > deadline:
                    raise AssertionError(f"no new rows within {timeout}s")
                time.sleep(0.005)
            return time.monotonic()
        finally:
            self._conn.close()


@pytest.mark.slow
def test_kills_in_the_store_phase_leave_the_old_or_the_new_postgres_kb(
    tmp_path: Path, zygote: Zygote
) -> None:
    from citewise.store.postgres import PostgresStore

    url = pg.fresh_url()
    store = PostgresStore(url)

    def state() -> State:
        assert store.names() == ["x"]
        return search_state(store)

    try:
        env = {"CITEWISE_HOME": str(tmp_path / "home"), "CITEWISE_STORE_URL": url}
        docs = {v: write_version(tmp_path / f"v{v}", v) for v in (1, 2)}
        harness = Harness(zygote, env, docs)
        watch = lambda: RowWatch(url)  # noqa: E731
        zygote.run(env, *harness.command(1, "rebuild"))
        states = {1: state()}
        took = harness.timed(2, "rebuild", watch)
        states[2] = state()
        assert states[1] != states[2]
        harness.timed(1, "rebuild", watch)
        landed = harness.kill_runs("rebuild", KILLS, took, state, states, watch)
        check(landed, KILLS, f"PostgreSQL index --rebuild, killed in the store phase ({took:.2f}s)")
        zygote.run(env, *harness.command(2, "rebuild"))
        assert state() == states[2]
    finally:
        store.close()
        pg.drop_schema(url)
