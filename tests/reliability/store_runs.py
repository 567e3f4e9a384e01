"""Helpers of the store-phase tests: docs versions, citewise runs in forked children, and the
moment a run starts writing its knowledge base."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[2]


def write_version(folder: Path, version: int, pages: int = 30, *, same_pages: bool = False) -> Path:
    """``pages`` pages of 8 sections; version 2 drops the first 10 pages, rewrites the rest
    and adds 10 (``same_pages``: rewrites them all), so every chunk differs and both versions
    have words of their own."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.md"):
        old.unlink()
    first = 0 if version == 1 or same_pages else 10
    word = "alpha" if version == 1 else "omega"
    for page in range(first, first + pages):
        parts = [f"# Page {page}"]
        for section in range(8):
            parts += [
                f"## Topic {page}.{section}",
                f"Step {section} of page {page} ({word}{page}): install the package, "
                f"configure widget {page * 8 + section} with {word}, then restart it. " * 3,
            ]
        (folder / f"p{page:03}.md").write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return folder


class Zygote:
    """A ``tests.reliability.zygote`` process: citewise runs in forked, killable children."""

    def __init__(self, log: Path) -> None:
        self._log: IO[str] = log.open("a", encoding="utf-8")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.zygote"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )

    def start(self, env: dict[str, str], *args: str) -> int:
        """Start ``citewise ARGS`` in a child; its pid."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"env": env, "args": list(args)}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline().split()
        assert line and line[0] == "pid", f"the zygote died: {line}"
        return int(line[1])

    def wait(self) -> str:
        """How the child ended: ``exit N`` or ``signal N``."""
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def run(self, env: dict[str, str], *args: str) -> None:
        self.start(env, *args)
        outcome = self.wait()
        assert outcome == "exit 0", f"citewise {' '.join(args)}: {outcome} (see {self._log.name})"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._log.close()


def _entries(folder: Path) -> frozenset[tuple[str, int]]:
    """The knowledge-base folder's files and folders (by inode), without lock, WAL and shared
    memory files (reads create those)."""
    found: set[tuple[str, int]] = set()
    for path in _walk(folder):
        if path.name.endswith((".lock", "-wal", "-shm", "-journal")):
            continue
        try:
            found.add((str(path.relative_to(folder)), path.lstat().st_ino))
        except FileNotFoundError:
            continue
    return frozenset(found)


def _walk(folder: Path) -> list[Path]:
    """Every path under ``folder``, tolerating what a run deletes meanwhile."""
    paths = []
    for top, dirs, files in os.walk(folder):  # errors (a folder gone) are skipped
        paths += [Path(top, name) for name in dirs + files]
    return paths


def _wal_written(folder: Path) -> bool:
    for wal in _walk(folder):
        if not wal.name.endswith(".sqlite-wal"):
            continue
        try:
            if wal.stat().st_size > 0:
                return True
        except FileNotFoundError:
            continue
    return False


class StoreWatch:
    """Tells when a run starts writing the knowledge base folder (its store phase): a file
    or folder appears, goes or is replaced, or a write-ahead log grows."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.before = _entries(folder)

    def started(self) -> bool:
        return _entries(self.folder) != self.before or _wal_written(self.folder)

    def wait_started(self, timeout: float = 120.0) -> float:
        """Poll until the store phase starts; the monotonic time it was seen."""
        deadline = time.monotonic() + timeout
        while not self.started():
            if time.monotonic() > deadline:
                raise AssertionError(f"no write to {self.folder} within {timeout}s")
            time.sleep(0.005)
        return time.monotonic()
