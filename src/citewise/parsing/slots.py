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
        # Each slot's file stays open (opening and closing it per parse was most of a
        # slot's cost: a build of 5,183 documents spent 0.09 s there; benchmarks/peers.md).
        # A lock belongs to its open file, which this process's threads share: the slots
        # they hold are marked here.
        self._files: dict[int, int] = {}
        self._taken: set[int] = set()
        self._pid = os.getpid()
        self._files_lock = threading.Lock()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold a slot for the block; waits while all are taken."""
        with self._threads:
            if self.folder is None or fcntl is None:
                yield
                return
            number, handle = self._lock_one()
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                with self._files_lock:
                    self._taken.discard(number)

    def _lock_one(self) -> tuple[int, int]:
        while True:
            with self._files_lock:
                for number in range(self.count):
                    if number in self._taken:
                        continue
                    handle = self._file(number)
                    try:
                        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        continue
                    self._taken.add(number)
                    return number, handle
            time.sleep(_POLL_SECONDS)

    def _file(self, number: int) -> int:
        """Slot ``number``'s open file (the caller holds ``_files_lock``)."""
        assert self.folder is not None
        if self._pid != os.getpid():
            # A forked child: the inherited files share the parent's locks. Closing them
            # here releases nothing of the parent's (its own descriptors stay open).
            for inherited in self._files.values():
                os.close(inherited)
            self._files.clear()
            self._taken.clear()
            self._pid = os.getpid()
        handle = self._files.get(number)
        if handle is not None and os.fstat(handle).st_nlink == 0:
            os.close(handle)  # the file was deleted: lock the one other processes open
            handle = None
        if handle is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"slot-{number}.lock"
            handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            self._files[number] = handle
        return handle
