"""A small JSON file of bounded record lists under ``$CITEWISE_HOME``, shared by processes.

The diagnostics history and the answer feedback both keep recent records in one JSON file
that the server and CLI commands of a home read and write: each list holds at most its own
number of records, the whole file at most a number of bytes (the oldest records go first),
written atomically (a reader sees the old file or the new one) under a file lock.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the in-process lock still serializes
    fcntl = None  # type: ignore[assignment]

__all__ = ["BoundedJSONFile", "Records"]

Records = dict[str, list[dict[str, Any]]]


class BoundedJSONFile:
    """The file ``path``: ``{"version": 1, NAME: [record, …], …}`` for each bounded list.

    Args:
        path: the file.
        limits: each list's name and the most records it keeps (the newest ones).
        max_bytes: the most bytes the file takes; past it the oldest tenth of the longest
            list goes, until it fits.
    """

    def __init__(self, path: Path, limits: Mapping[str, int], max_bytes: int) -> None:
        self.path = path
        self.limits = dict(limits)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the file for a read-modify-write (this process's threads and others')."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = self.path.with_name(f".{self.path.name}.lock")
        with self._lock, lock.open("a") as handle:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fcntl is not None:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def read(self) -> Records:
        """Every list (empty when the file is missing or damaged: records lost, never an
        error for the operation that reads them)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {}
        except ValueError:
            data = {}
        lists: Records = {}
        for name in self.limits:
            found = data.get(name) if isinstance(data, dict) else None
            items = found if isinstance(found, list) else []
            lists[name] = [item for item in items if isinstance(item, dict)]
        return lists

    def write(self, lists: Mapping[str, list[dict[str, Any]]]) -> Records:
        """Write ``lists`` within the bounds (call it under :meth:`locked`); what was kept.

        Raises:
            OSError: the file could not be written (the old one stays, whole).
        """
        kept = self.bounded(lists)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            temporary.write_text(self.dump(kept), encoding="utf-8")
            os.replace(temporary, self.path)  # atomic: a reader sees the old file or the new
        except OSError:
            temporary.unlink(missing_ok=True)  # a full disk: the old file stays, whole
            raise
        return kept

    def dump(self, lists: Mapping[str, list[dict[str, Any]]]) -> str:
        body = {"version": 1, **{name: list(lists.get(name, [])) for name in self.limits}}
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    def bounded(self, lists: Mapping[str, list[dict[str, Any]]]) -> Records:
        """The newest records of each list within its count, then all within the bytes."""
        kept: Records = {
            name: list(lists.get(name, []))[-limit:] if limit > 0 else []
            for name, limit in self.limits.items()
        }
        while len(self.dump(kept).encode("utf-8")) > self.max_bytes:
            longest = max(kept, key=lambda name: len(kept[name]))
            if not kept[longest]:
                break
            kept[longest] = kept[longest][max(1, len(kept[longest]) // 10) :]
        return kept
