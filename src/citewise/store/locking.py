"""A per-knowledge-base write lock: ingest and delete of one knowledge base run one at a time.

SQLite's ``BEGIN IMMEDIATE`` already makes each write atomic, but an ingest reads the stored
state, embeds for a while, then writes; two interleaved ingests (or an ingest and a delete)
could each act on a state the other is about to change. The lock spans the whole operation:
a thread lock within the process and an advisory file lock (POSIX ``flock``) across processes.
Searches never take it: WAL lets them read the last committed state meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the in-process lock still serializes
    fcntl = None  # type: ignore[assignment]

_LOCKS: dict[Path, threading.Lock] = {}
_GUARD = threading.Lock()


@contextmanager
def kb_write_lock(root: Path, kb: str) -> Iterator[None]:
    """Hold knowledge base ``kb``'s write lock (``root/.{kb}.lock``) for the ``with`` body."""
    root.mkdir(parents=True, exist_ok=True)
    path = (root / f".{kb}.lock").resolve()
    with _GUARD:
        lock = _LOCKS.setdefault(path, threading.Lock())
    with lock, path.open("a") as handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
