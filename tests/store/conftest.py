"""The PostgreSQL store tests' fixtures: a fresh schema per test (`pg_url`), a store on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.store import open_store
from citewise.store.postgres import PostgresStore
from tests import pg


@pytest.fixture
def pg_url() -> Iterator[str]:
    url = pg.fresh_url()
    yield url
    pg.drop_schema(url)


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    s = open_store(pg_url, home=Path("/nonexistent"))
    assert isinstance(s, PostgresStore)
    yield s
    s.close()
