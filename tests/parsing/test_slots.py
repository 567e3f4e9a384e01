"""Parse slots bound the parses of one installation across processes: four processes that
each hold a slot for a while never run more than two at once, and a killed holder's slot
is free again."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from citewise.parsing.slots import ParseSlots

_HOLDER = """
import sys, time
from pathlib import Path
from citewise.parsing.slots import ParseSlots
folder, log, seconds = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
with ParseSlots(2, folder).held():
    start = time.time()
    time.sleep(seconds)
    log.write_text(f"{start} {time.time()}")
"""


def test_four_processes_share_two_slots(tmp_path: Path) -> None:
    folder = tmp_path / "home" / ".parse-slots"
    logs = [tmp_path / f"p{n}.log" for n in range(4)]
    children = [
        subprocess.Popen([sys.executable, "-c", _HOLDER, str(folder), str(log), "0.6"])
        for log in logs
    ]
    for child in children:
        assert child.wait(60) == 0
    spans = [tuple(map(float, log.read_text().split())) for log in logs]
    # At each start, how many spans were running: never more than two.
    overlaps = [sum(1 for s, e in spans if s <= start < e) for start, _ in spans]
    assert max(overlaps) <= 2
    assert max(e for _, e in spans) - min(s for s, _ in spans) >= 1.2


def test_a_killed_holder_frees_its_slot(tmp_path: Path) -> None:
    folder = tmp_path / ".parse-slots"
    holders = [
        subprocess.Popen([sys.executable, "-c", _HOLDER, str(folder), str(tmp_path / f"{n}"), "60"])
        for n in range(2)
    ]
    deadline = time.time() + 30
    while len(list(folder.glob("slot-*.lock"))) < 2 and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # both hold their slot now (each sleeps 60 s inside it)
    holders[0].kill()
    holders[0].wait()
    started = time.perf_counter()
    with ParseSlots(2, folder).held():
        waited = time.perf_counter() - started
    holders[1].kill()
    holders[1].wait()
    assert waited < 5


def test_threads_of_one_process_share_the_slots_too(tmp_path: Path) -> None:
    import threading

    slots = ParseSlots(2, tmp_path / ".parse-slots")
    running = peak = 0
    lock = threading.Lock()

    def parse() -> None:
        nonlocal running, peak
        with slots.held():
            with lock:
                running += 1
                peak = max(peak, running)
            time.sleep(0.1)
            with lock:
                running -= 1

    threads = [threading.Thread(target=parse) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert peak == 2


_ONE_SLOT = """
import sys, time
from pathlib import Path
from citewise.parsing.slots import ParseSlots
started = time.time()
with ParseSlots(1, Path(sys.argv[1])).held():
    print(time.time() - started)
"""


def test_a_deleted_slot_file_is_made_again_and_locked(tmp_path: Path) -> None:
    """The files stay open between parses; one deleted meanwhile is not locked in vain."""
    import shutil

    folder = tmp_path / ".parse-slots"
    slots = ParseSlots(1, folder)
    with slots.held():
        pass
    shutil.rmtree(folder)
    with slots.held():
        child = subprocess.Popen(
            [sys.executable, "-c", _ONE_SLOT, str(folder)], stdout=subprocess.PIPE, text=True
        )
        time.sleep(1.0)  # the child waits for the slot this process holds
    out, _ = child.communicate(timeout=30)
    assert float(out) >= 0.8
    assert (folder / "slot-0.lock").is_file()
