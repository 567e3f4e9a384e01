"""A per-knowledge-base write lock: ingest and delete of one knowledge base run one at a time.

SQLite's ``BEGIN IMMEDIATE`` already makes each write atomic, but an ingest reads the stored
state, embeds for a while, then writes; two interleaved ingests (or an ingest and a delete)
could each act on a state the other is about to change. The lock spans the whole operation:
a thread lock within the process and an advisory file lock (POSIX ``flock``) across processes.
Searches never take it: WAL lets them read the last committed state meanwhile.
"""

from __future__ import annotations

import glob
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the in-process lock still serializes
    fcntl = None  # type: ignore[assignment]

_LOCKS: dict[Path, threading.Lock] = {}
_GUARD = threading.Lock()


@contextmanager
def kb_write_lock(root: Path, kb: str) -> Iterator[None]:
    """Hold knowledge base ``kb``'s write lock (``root/.{kb}.lock``) for the ``with`` body.

    The lock file goes when the body leaves no file of ``kb`` behind (a failed create), so a
    failed create leaves nothing. Unlinking a lock file others may wait on is safe only
    because each locker checks, once it holds the lock, that the file it locked is still
    the one at ``path`` (else it locks the new one): two lockers never hold different inodes.
    """
    root.mkdir(parents=True, exist_ok=True)
    path = (root / f".{kb}.lock").resolve()
    with _GUARD:
        lock = _LOCKS.setdefault(path, threading.Lock())
    with lock:
        handle = _acquire(path)
        try:
            yield
        finally:
            try:
                if fcntl is not None and not any(root.glob(f"{glob.escape(kb)}.*")):
                    path.unlink(missing_ok=True)
            finally:
                if fcntl is not None:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
                handle.close()


def _acquire(path: Path) -> IO[str]:
    """The lock file at ``path``, opened and locked, and still the file at ``path``."""
    while True:
        handle = path.open("a")
        if fcntl is None:  # pragma: no cover - Windows
            return handle
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            current = os.stat(path)
        except FileNotFoundError:
            current = None
        mine = os.fstat(handle.fileno())
        if current is not None and (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino):
            return handle
        # The holder before us removed the file: lock the one at ``path`` now.
        handle.close()
