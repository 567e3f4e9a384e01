"""``citewise index`` onto a full disk: a one-line error and a non-zero exit, nothing of a new
knowledge base left behind, and an existing one intact after a failed ``--rebuild``.

The disk is a 3 MB tmpfs where this process may mount one (root on Linux), else a file-size
limit (RLIMIT_FSIZE: writes past it fail with EFBIG, as SQLite sees a full disk).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.store_runs import REPO, write_version


def _mounted(folder: Path) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0:
        return False
    folder.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A home folder on a small disk, and the environment that makes it small."""
    folder = tmp_path / "disk"
    if _mounted(folder):
        try:
            yield folder / "home", {}
        finally:
            subprocess.run(["umount", str(folder)], check=True)
        return
    pytest.importorskip("resource", reason="RLIMIT_FSIZE needs a POSIX system")
    yield folder / "home", {"CITEWISE_TEST_FSIZE": str(256 * 1024)}


def citewise(home: Path, extra: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CITEWISE_HOME": str(home), **extra}
    env.pop("CITEWISE_LLM_MODEL", None)
    return subprocess.run(
        [sys.executable, "-m", "tests.reliability.hashing_cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def assert_one_line_error(done: subprocess.CompletedProcess[str]) -> None:
    """A non-zero exit with one error line (warnings that a cache or the diagnostics could
    not be saved may come with it, once each), no traceback."""
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("citewise: error:")]
    assert len(errors) == 1 and "disk is full" in errors[0], done.stderr
    assert len(lines) <= 3, done.stderr


def kb_files(home: Path) -> list[str]:
    """Everything under the knowledge-base folder but lock files."""
    root = home / "kb"
    found = root.rglob("*") if root.exists() else []
    return sorted(str(p.relative_to(root)) for p in found if not p.name.endswith(".lock"))


def fill(home: Path, leave: int) -> None:
    """Take all the disk's free space but ``leave`` bytes."""
    stat = os.statvfs(home)
    free = stat.f_bavail * stat.f_frsize
    with (home / "filler").open("wb") as out:
        out.write(b"\0" * max(free - leave, 0))


@pytest.mark.slow
def test_a_new_knowledge_base_on_a_full_disk_is_an_error_and_leaves_nothing(
    tmp_path: Path, disk: tuple[Path, dict[str, str]]
) -> None:
    home, extra = disk
    # Well past 3 MB with its embedding cache (200 pages fitted once the cache kept vectors
    # inline).
    docs = write_version(tmp_path / "docs", 1, pages=600)
    done = citewise(home, extra, "index", str(docs), "--kb", "big", "-q")
    assert_one_line_error(done)
    assert kb_files(home) == []
    listed = citewise(home, {}, "kb", "list", "--json")
    assert listed.returncode == 0 and "big" not in listed.stdout


@pytest.mark.slow
def test_a_rebuild_on_a_full_disk_keeps_the_old_index(
    tmp_path: Path, disk: tuple[Path, dict[str, str]]
) -> None:
    home, extra = disk
    small = write_version(tmp_path / "small", 1, pages=3)
    assert citewise(home, {}, "index", str(small), "--kb", "x", "-q").returncode == 0
    before = kb_files(home)
    if not extra:
        fill(home, leave=300 * 1024)
    docs = write_version(tmp_path / "docs", 2, pages=200)
    done = citewise(home, extra, "index", str(docs), "--kb", "x", "--rebuild", "-q")
    assert_one_line_error(done)
    assert "intact" in done.stderr
    assert kb_files(home) == before
    (home / "filler").unlink(missing_ok=True)  # reading a WAL file needs a little space
    listed = citewise(home, {}, "doc", "list", "--kb", "x", "--json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(d["doc_id"] for d in json.loads(listed.stdout)) == [
        "p000.md",
        "p001.md",
        "p002.md",
    ]
    found = citewise(home, {}, "search", "alpha1", "--kb", "x", "--json")
    assert found.returncode == 0 and json.loads(found.stdout), found.stderr
