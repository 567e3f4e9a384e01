"""The SQLite store's dense matrix, read in batches, against the rows it was read from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citewise.store import SQLiteStore, sqlite_dense
from citewise.store.sqlite_dense import read_dense

from .support import DIM, update


@pytest.mark.parametrize("batch", [1, 3, 512])
def test_batches_of_any_size_read_every_window_and_each_chunk_once(
    tmp_path: Path, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A batch of 3 rows cuts chunks of two windows across batches.
    monkeypatch.setattr(sqlite_dense, "_BATCH", batch)
    store = SQLiteStore(tmp_path)
    kb = store.create("kb")
    kb.apply([update(f"d{i}", ["one", "two"], scope=f"s{i % 2}", page=f"p{i}") for i in range(7)])
    with store._read("kb") as conn:
        index = read_dense(conn, "g")
        rows = conn.execute(
            "SELECT c.rid, c.scope, c.page, c.doc_id, v.vector FROM vectors v "
            "JOIN chunks c ON c.chunk_id = v.chunk_id ORDER BY c.rid, v.window"
        ).fetchall()
    assert index is not None and index.matrix.shape == (len(rows), DIM) == (28, DIM)
    want = np.stack([np.frombuffer(r[4], dtype=np.float32) for r in rows])
    assert np.array_equal(index.matrix, want)
    chunks = list(dict.fromkeys(r[0] for r in rows))
    assert index.rids.tolist() == chunks and index.starts.tolist() == list(range(0, 28, 2))
    firsts = [next(r for r in rows if r[0] == rid) for rid in chunks]
    assert index.scopes.tolist() == [r[1] for r in firsts]
    assert index.pages.tolist() == [r[2] for r in firsts]
    assert index.doc_ids.tolist() == [r[3] for r in firsts]
    store.close()


def test_no_vectors_is_no_matrix(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    store.create("kb")
    with store._read("kb") as conn:
        assert read_dense(conn, "g") is None
    store.close()
