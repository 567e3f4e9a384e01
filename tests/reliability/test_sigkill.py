"""SIGKILL during ``citewise index``: the knowledge base is the old state or the new, never a mix.

Each run starts from the same saved home (index and embedding cache of version 1 of a docs
folder), indexes version 2 (files added, changed and removed: about 120 chunks to embed) in a
subprocess and is killed at a different moment: while starting, embedding or writing.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

# When to kill ``citewise index``, as fractions of the time a complete run took just before
# (about 3-5 s on a busy 2-core machine): starting up, parsing, embedding, writing, and
# past the end (the kill then finds it finished).
KILL_AT = (0.07, 0.25, 0.5, 0.75, 0.9, 0.97, 1.1)

State = tuple[frozenset[tuple[str, str]], int, int]


def write_docs(folder: Path, version: int) -> None:
    """30 pages of 6 sections; version 2 drops 5, rewrites 5 and adds 10."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    pages = range(30) if version == 1 else range(5, 40)
    for page in pages:
        tag = "rewritten" if version == 2 and 10 <= page < 15 else "first"
        parts = [f"# Page {page}"]
        for section in range(6):
            parts += [
                f"## Topic {page}.{section}",
                f"Step {section} of page {page} ({tag}): install the package, then configure it.",
            ]
        (folder / f"p{page:03}.md").write_text("\n\n".join(parts) + "\n")


def index(folder: Path, home: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CITEWISE_HOME": str(home)}
    command = [sys.executable, "-m", "citewise", "index", str(folder), "--kb", "x"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def checked_state(db: Path) -> State:
    """The stored documents and counts, after checking the file and its cross-references."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        docs = frozenset(conn.execute("SELECT doc_id, content_hash FROM documents").fetchall())
        chunked = {row[0] for row in conn.execute("SELECT DISTINCT doc_id FROM chunks")}
        assert chunked == {doc for doc, _ in docs}, "chunks without documents or vice versa"
        orphans = conn.execute(
            "SELECT COUNT(*) FROM vectors WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)"
        ).fetchone()[0]
        assert orphans == 0, "vectors of chunks that are gone"
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        vectors = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    finally:
        conn.close()
    return docs, chunks, vectors


def run_to_end(folder: Path, home: Path) -> None:
    process = index(folder, home)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err.decode()


def test_sigkill_during_index_leaves_the_old_or_the_new_state(tmp_path: Path) -> None:
    docs, home, saved = tmp_path / "docs", tmp_path / "home", tmp_path / "saved"
    db = home / "kb" / "x.sqlite"
    write_docs(docs, 1)
    run_to_end(docs, home)
    old = checked_state(db)
    shutil.copytree(home, saved)
    write_docs(docs, 2)
    started = time.monotonic()
    run_to_end(docs, home)
    took = time.monotonic() - started
    new = checked_state(db)
    assert new != old and len(new[0]) == 35

    seen: list[State] = []
    for fraction in KILL_AT:
        shutil.rmtree(home)
        shutil.copytree(saved, home)
        process = index(docs, home)
        time.sleep(fraction * took)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
        seen.append(checked_state(db))

    # The next run finishes the job, whatever state the last kill left.
    run_to_end(docs, home)
    assert checked_state(db) == new
    landed = [
        (round(fraction * took, 2), "old" if s == old else "new" if s == new else "MIXED")
        for fraction, s in zip(KILL_AT, seen, strict=True)
    ]
    print(
        f"complete run {took:.2f}s; killed after (s) -> state:", landed
    )  # shown with -s: where the kills landed
    assert all(state in (old, new) for state in seen), landed
