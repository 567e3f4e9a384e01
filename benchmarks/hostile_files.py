"""Times the hostile files of issue 26 through citewise's parse and chunk steps: wall time and
peak resident memory of a fresh process per file, cut off at ``--cap`` seconds.

    .venv/bin/python benchmarks/hostile_files.py [--cap 60] [--only NAME] [--json OUT]

Each file is generated (tests/parsing/hostile_files.py), written to a temporary folder and
read by a child process that runs ``parse_file`` then ``chunk_sections``, timed after a
tiny CSV has started the parse worker (its start is reported apart); the peak RSS is the
larger of the child's and its parse worker's (``RUSAGE_CHILDREN`` once it is reaped).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "parsing"))

from hostile_files import HOSTILE_FILES  # noqa: E402

_CHILD = """
import resource, sys, time
from pathlib import Path
from citewise.chunking import chunk_sections
from citewise.errors import CitewiseError
from citewise.kb import source_from_bytes
from citewise.parsing.source import parse_file
path = Path(sys.argv[1])
try:
    from citewise.parsing.worker import stop_workers
except ImportError:  # before the parse worker existed: nothing to start or stop
    stop_workers = None
warm = time.perf_counter()
parse_file(source_from_bytes("warm.csv", b"a,b\\n1,2\\n"))  # starts the worker, if any
warm = time.perf_counter() - warm
started = time.perf_counter()
try:
    sections = parse_file(source_from_bytes(path.name, path.read_bytes()))
    chunks = chunk_sections(sections, max_chars=2000)
    outcome = f"parsed: {len(sections)} sections, {len(chunks)} chunks"
except CitewiseError as error:
    outcome = f"refused: {error}"
seconds = time.perf_counter() - started
if stop_workers is not None:
    stop_workers()  # reaped, so their peak is in RUSAGE_CHILDREN
workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{seconds:.3f}\\t{workers}\\t{outcome} (worker start {warm:.2f} s)")
"""


def measure(path: Path, cap: float) -> dict[str, object]:
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE, text=True
    )
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - started > cap:
            child.kill()
            _, status, usage = os.wait4(child.pid, 0)
            return {
                "file": path.name,
                "bytes": path.stat().st_size,
                "seconds": f"> {cap:.0f}",
                "peak_rss_mb": round(usage.ru_maxrss / 1024),
                "outcome": "killed at the cap",
            }
        time.sleep(0.05)
    assert child.stdout is not None
    line = child.stdout.read().strip()
    child.returncode = os.waitstatus_to_exitcode(status)
    parts = line.split("\t", 2) if line else ["", "0", f"crashed (exit {child.returncode})"]
    seconds, workers, outcome = parts
    rss = max(usage.ru_maxrss, int(workers)) / 1024
    return {
        "file": path.name,
        "bytes": path.stat().st_size,
        "seconds": round(float(seconds), 2) if seconds else round(time.perf_counter() - started, 2),
        "peak_rss_mb": round(rss),
        "outcome": outcome[:200],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=60.0)
    parser.add_argument("--only", action="append")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for name, make in HOSTILE_FILES.items():
            if args.only and name not in args.only:
                continue
            path = Path(folder) / name
            path.write_bytes(make())
            result = measure(path, args.cap)
            print(json.dumps(result), flush=True)
            results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
