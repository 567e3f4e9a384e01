"""A full disk (here: a file-size limit, RLIMIT_FSIZE) is a one-line error that keeps the
previous index intact and leaves no temporary file; searches still answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

resource = pytest.importorskip("resource", reason="RLIMIT_FSIZE needs a POSIX system")

CHILD = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail instead of killing
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from citewise.cli import main
sys.exit(main(sys.argv[2:]))
"""


def citewise(home: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CITEWISE_HOME": str(home)}
    env.pop("CITEWISE_LLM_MODEL", None)
    if limit is None:
        command = [sys.executable, "-m", "citewise", *args]
    else:
        command = [sys.executable, "-c", CHILD, str(limit), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def folder(root: Path, pages: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for n in range(pages):
        body = "\n\n".join(f"Paragraph {n}.{k} about widgets and gadgets." * 8 for k in range(6))
        (root / f"page{n}.md").write_text(f"# Page {n}\n\n## Part\n\n{body}\n", encoding="utf-8")
    return root


def test_a_full_disk_during_a_reindex_keeps_the_index_and_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    docs = folder(tmp_path / "docs", 2)
    assert citewise(home, "index", str(docs), "--kb", "full", "-q").returncode == 0
    folder(docs, 40)  # now much more to write than the limit allows

    failed = citewise(home, "index", str(docs), "--kb", "full", "-q", limit=64 * 1024)
    assert failed.returncode == 1, failed.stderr
    assert "Traceback" not in failed.stderr
    assert "could not be written" in failed.stderr and "is the disk full" in failed.stderr

    listed = citewise(home, "doc", "list", "--kb", "full", "--json")
    assert sorted(d["doc_id"] for d in json.loads(listed.stdout)) == ["page0.md", "page1.md"]
    searched = citewise(home, "search", "widgets", "--kb", "full", "--json", limit=64 * 1024)
    assert searched.returncode == 0 and json.loads(searched.stdout), searched.stderr


def test_a_new_knowledge_base_that_cannot_be_created_leaves_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    failed = citewise(home, "kb", "create", "newkb", limit=4096)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert "is the disk full" in failed.stderr
    leftovers = sorted(p.name for p in (home / "kb").iterdir()) if (home / "kb").exists() else []
    assert [name for name in leftovers if not name.endswith(".lock")] == []
