"""The write lock's file is removed after a failed create, and that stays safe for waiters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from citewise.store.locking import kb_write_lock

# Each process adds 1 to a counter, read-modify-write, 40 times under the lock. The knowledge
# base never exists, so every holder removes the lock file on leaving: a waiter that locked
# the removed file must notice and lock the new one, or two holders overlap and lose counts.
WORKER = """
import sys, time
from pathlib import Path
from citewise.store.locking import kb_write_lock
root = Path(sys.argv[1]); counter = root / "counter"
for _ in range(40):
    with kb_write_lock(root, "z"):
        value = int(counter.read_text())
        time.sleep(0.001)
        counter.write_text(str(value + 1))
"""


def test_removing_the_lock_file_never_lets_two_holders_in(tmp_path: Path) -> None:
    (tmp_path / "counter").write_text("0")
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path)]) for _ in range(4)]
    assert [worker.wait(timeout=120) for worker in workers] == [0, 0, 0, 0]
    assert (tmp_path / "counter").read_text() == "160"
    assert not (tmp_path / ".z.lock").exists()


def test_the_lock_file_stays_while_the_knowledge_base_has_files(tmp_path: Path) -> None:
    (tmp_path / "k.sqlite").write_bytes(b"")
    with kb_write_lock(tmp_path, "k"):
        assert (tmp_path / ".k.lock").exists()
    assert (tmp_path / ".k.lock").exists()
    with kb_write_lock(tmp_path, "gone"):
        pass
    assert not (tmp_path / ".gone.lock").exists()
