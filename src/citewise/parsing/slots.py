"""How many documents one installation parses at once, across all its processes: N slot
files under the home, each held with an exclusive ``flock`` while a parse runs."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from citewise.config import PARSE_SLOTS, ParseSettings

try:
    import fcntl
except ImportError:  # Windows: the bound is per process only
    fcntl = None  # type: ignore[assignment]

__all__ = ["DEFAULT_PARSE_SLOTS", "ParseSlots", "parse_slot_count"]

DEFAULT_PARSE_SLOTS = PARSE_SLOTS
# How often a parse waiting for another process's slot looks again.
_POLL_SECONDS = 0.05


def parse_slot_count() -> int:
    """``CITEWISE_PARSE_CONCURRENCY`` (default 2): parses at once per installation."""
    return ParseSettings.from_env().concurrency


class ParseSlots:
    """At most ``count`` parses at once in this process and, with ``folder``, in every
    process that uses the same folder (``{home}/.parse-slots``): one more waits.

    A slot is the exclusive ``flock`` of one of ``count`` files; the system releases it
    when its process dies, so a killed indexer never keeps a slot.
    """

    def __init__(self, count: int, folder: Path | None = None) -> None:
        self.count = count
        self.folder = folder
        self._threads = threading.BoundedSemaphore(count)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold a slot for the block; waits while all are taken."""
        with self._threads:
            if self.folder is None or fcntl is None:
                yield
                return
            handle = self._lock_one()
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                os.close(handle)

    def _lock_one(self) -> int:
        assert self.folder is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        while True:
            for number in range(self.count):
                path = self.folder / f"slot-{number}.lock"
                handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(handle)
                    continue
                return handle
            time.sleep(_POLL_SECONDS)
