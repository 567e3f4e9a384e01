"""The SQLite store's exact dense matrix: every stored window's vector, read into one array."""

from __future__ import annotations

import sqlite3

import numpy as np

from citewise.errors import StorageError
from citewise.store.dense import DenseIndex

# 512 windows: 1.5 MB of MiniLM blobs (and their joined copy) at a time beside the matrix.
_BATCH = 512
_JOINED = "FROM vectors v JOIN chunks c ON c.chunk_id = v.chunk_id"


def read_dense(conn: sqlite3.Connection, generation: str) -> DenseIndex | None:
    """The matrix of every stored window (None when there is none), read in batches straight
    into its rows: never all the rows' blobs and their joined copy at once beside it (twice
    the matrix, the peak of a first search: benchmarks/peers.md). ``conn`` is in a read
    transaction, so the count and the rows agree."""
    count = int(conn.execute(f"SELECT count(*) {_JOINED}").fetchone()[0])
    if not count:
        return None
    cur = conn.execute(
        f"SELECT c.rid, c.scope, c.page, c.doc_id, v.vector {_JOINED} ORDER BY c.rid, v.window"
    )
    rids = np.empty(count, dtype=np.int64)
    matrix: np.ndarray | None = None
    firsts: list[tuple[str, str, str]] = []
    row = 0
    while batch := cur.fetchmany(_BATCH):
        n = len(batch)
        if row + n > count:
            raise StorageError("the stored vectors changed while they were read")
        block = np.frombuffer(b"".join(r[4] for r in batch), dtype=np.float32).reshape(n, -1)
        if matrix is None:
            matrix = np.empty((count, block.shape[1]), dtype=np.float32)
        matrix[row : row + n] = block
        rids[row : row + n] = np.fromiter((r[0] for r in batch), dtype=np.int64, count=n)
        # Rows are sorted by rid, so each chunk's windows are one contiguous run.
        here = rids[row : row + n]
        new = np.r_[row == 0 or rids[row - 1] != here[0], here[1:] != here[:-1]]
        firsts += [batch[i][1:4] for i in np.flatnonzero(new)]
        row += n
    if matrix is None or row != count:
        raise StorageError("the stored vectors changed while they were read")
    starts = np.flatnonzero(np.r_[True, rids[1:] != rids[:-1]])
    return DenseIndex(
        generation=generation,
        matrix=matrix,
        starts=starts,
        rids=rids[starts],
        scopes=np.array([f[0] for f in firsts], dtype=str),
        pages=np.array([f[1] for f in firsts], dtype=str),
        doc_ids=np.array([f[2] for f in firsts], dtype=str),
    )
