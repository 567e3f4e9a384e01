"""``python -m tests.reliability.zygote``: runs citewise commands in forked children, fast.

Imports the CLI once, then for every JSON line ``{"env": {...}, "args": [...]}`` on stdin
forks a child that runs ``citewise ARGS`` (the hashing embedder of ``hashing_cli``) with
``env`` added, prints ``pid N``, waits for it and prints ``exit N`` (or ``signal N``). Each
child is a real process of its own, as killable as ``citewise`` started from a shell, but
skips the interpreter start and the imports, so a kill harness can afford many runs.
"""

from __future__ import annotations

import json
import os
import sys

# What the children need, imported once here (forking is copy-on-write).
import citewise.cli  # noqa: F401  (pre-imported)
import citewise.cli.index  # noqa: F401
import citewise.store.sqlite  # noqa: F401
from tests.reliability import hashing_cli


def run() -> None:
    for line in sys.stdin:
        order = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the child
            try:
                os.environ.update(order["env"])
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                code = hashing_cli.main(order["args"])
            except BaseException:  # noqa: BLE001 - report, never return into the loop
                code = 99
            os._exit(code)
        print(f"pid {pid}", flush=True)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            print(f"signal {os.WTERMSIG(status)}", flush=True)
        else:
            print(f"exit {os.WEXITSTATUS(status)}", flush=True)


if __name__ == "__main__":
    run()
