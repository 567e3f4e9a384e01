"""`citewise store migrate` against a real PostgreSQL, and on the SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.store.postgres_schema import LATEST
from tests import pg

from .support import fail, run


@pytest.fixture
def pg_url() -> Iterator[str]:
    url = pg.fresh_url(auto_migrate="false")
    yield url
    pg.drop_schema(url)


def test_migrate_brings_a_postgres_store_up_to_date(
    home: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CITEWISE_STORE_URL", pg_url)
    # With auto_migrate=false nothing runs on an old schema until it is migrated.
    assert "run `citewise store migrate`" in fail(capsys, "kb", "list")
    applied = ", ".join(str(v) for v in range(1, LATEST + 1))
    assert f"store schema version {LATEST} (applied {applied})" in run(capsys, "store", "migrate")
    assert "already up to date" in run(capsys, "store", "migrate")
    run(capsys, "kb", "create", "team")
    assert "team" in run(capsys, "kb", "list")


def test_migrate_on_sqlite_has_nothing_to_do(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "nothing to migrate" in run(capsys, "store", "migrate")
