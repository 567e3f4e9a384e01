"""Parses a file in a worker process within a wall-clock and memory budget: a parse that runs
over is killed and its file refused, so one small hostile file cannot stall or bloat the
process that indexes it.

A worker is a fresh interpreter that imports the parsers once and is kept for later
parses (a parse then costs a millisecond or two more than in process); one that ran over
its budget is killed and replaced. A worker's address space is capped with ``RLIMIT_AS``.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import citewise.errors
from citewise.config import ParseSettings, child_environment
from citewise.documents import SourceFile
from citewise.errors import CitewiseError, SourceError, TooLargeError
from citewise.models import Section
from citewise.parsing import vision
from citewise.parsing.layout import SiteLayout

__all__ = ["parse_isolated", "serve", "stop_workers"]

# What the fork server imports once, so each worker starts with the parsers loaded.
_PRELOAD = [
    "citewise.parsing.source",
    "citewise.parsing.pdf",
    "citewise.parsing.docx",
    "citewise.parsing.html",
    "citewise.parsing.text",
    "pypdf",
    "docx",
    "pdfplumber",
]
# A worker is replaced once its resident memory passes this share of its budget (memory a
# parser leaked or fragmented goes back to the system), or, where that cannot be read,
# after this many parses.
_RESIDENT_SHARE = 0.5
_PARSES_PER_WORKER = 1000
_MIB = 1024 * 1024
# How long a new worker may take to start and import the parsers.
_START_SECONDS = 60.0


def parse_isolated(
    source: SourceFile,
    *,
    parse: Callable[..., list[Section]],
    site_url: str,
    version: str | None,
    scope: str,
    layout: SiteLayout | None,
    settings: ParseSettings,
) -> list[Section]:
    """``source``'s sections, parsed by ``parse`` (a module-level function, sent by name,
    called with ``limits``) in a worker process within the budget of ``settings``
    (``seconds``, ``memory_mib``); the worker parses within ``settings.limits``, sent with
    the file (the worker reads no limit of its own).

    Raises:
        TooLargeError: the parse ran past the budget's seconds or memory (the worker is
            killed; nothing of the file is kept).
        SourceError: the parser failed, or its worker died.
        CitewiseError: what the parser raised, as it raised it.
    """
    request = {
        "parse": parse,
        "source": source,
        "site_url": site_url,
        "version": version,
        "scope": scope,
        "layout": layout,
        "limits": settings.limits,
        "vision_env": vision.env_snapshot(),
    }
    worker = _take(settings.memory_mib)
    try:
        reply = worker.run(request, settings.seconds)
    except BaseException:
        worker.stop()
        raise
    if reply is None:
        worker.stop()
        raise TooLargeError(
            f"{source.path}: parsing took longer than {settings.seconds:g} s, the budget per "
            "file (CITEWISE_PARSE_SECONDS); refused, nothing was indexed"
        )
    kind = reply[0]
    if kind == "ok":
        _give_back(worker)
        sections: list[Section] = reply[1]
        return sections
    if kind in ("error", "failed"):
        _give_back(worker)  # a refusal, a broken file, a parser's bug: the worker is fine
        if kind == "error":
            raise _rebuilt(reply[1], reply[2])
        raise SourceError(f"{source.path}: the parser failed ({reply[1]}); nothing was indexed")
    worker.stop()
    if kind == "memory":
        raise TooLargeError(
            f"{source.path}: parsing needed more than {settings.memory_mib} MiB, the memory "
            "budget per file (CITEWISE_PARSE_MEMORY_MB); refused, nothing was indexed"
        )
    raise SourceError(f"{source.path}: the parser's process died ({reply[1]}); nothing was indexed")


def _rebuilt(name: str, message: str) -> CitewiseError:
    """The worker's citewise error, as the same class with the same message."""
    kind = getattr(citewise.errors, name, None)
    if not (isinstance(kind, type) and issubclass(kind, CitewiseError)):
        return SourceError(message)
    error = kind.__new__(kind)
    Exception.__init__(error, message)
    return error


class _Worker:
    """One worker process (a fresh interpreter running :func:`serve`) and its socket."""

    def __init__(self, memory_mib: int) -> None:
        ours, theirs = socket.socketpair()
        # A fresh interpreter, not a fork: the parent's threads, locks and open knowledge
        # bases (uvicorn, the embedder) are never copied into a worker, and no main
        # module is re-imported. It can import whatever the parent can.
        env = child_environment(PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        code = f"from citewise.parsing.worker import serve; serve({theirs.fileno()}, {memory_mib})"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code], pass_fds=[theirs.fileno()], env=env,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        theirs.close()
        self.connection = Connection(ours.detach())
        self.memory_mib = memory_mib
        self.parses = 0
        # The parsers are imported before the first parse's clock starts.
        if not self.connection.poll(_START_SECONDS) or self.connection.recv() != "ready":
            self.stop()
            raise SourceError("the parser's worker process did not start")

    def run(self, request: dict[str, Any], seconds: float) -> tuple[Any, ...] | None:
        """The worker's reply, or None when it did not answer within ``seconds``."""
        self.parses += 1
        deadline = time.monotonic() + seconds
        try:
            self.connection.send(request)
            while True:
                if not self.connection.poll(max(deadline - time.monotonic(), 0)):
                    return None
                reply: tuple[Any, ...] = self.connection.recv()
                if reply[0] != "extend":
                    return reply
                deadline += float(reply[1])  # OCR pages: see citewise.parsing.budget
        except (EOFError, OSError):
            code = self.process.wait(5)
            how = f"signal {-code}" if code < 0 else f"exit code {code}"
            return ("died", how)

    def resident_mib(self) -> float | None:
        """The worker's resident memory now (Linux), or None where it cannot be read."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return None

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.connection.close()


_IDLE: list[_Worker] = []
_IDLE_LOCK = threading.Lock()


def _take(memory_mib: int) -> _Worker:
    with _IDLE_LOCK:
        while _IDLE:
            worker = _IDLE.pop()
            if worker.alive() and worker.memory_mib == memory_mib:
                return worker
            worker.stop()
    return _Worker(memory_mib)


def _give_back(worker: _Worker) -> None:
    resident = worker.resident_mib()
    if (
        worker.parses >= _PARSES_PER_WORKER
        if resident is None
        else resident > _RESIDENT_SHARE * worker.memory_mib
    ):
        worker.stop()
        return
    with _IDLE_LOCK:
        _IDLE.append(worker)


def stop_workers() -> None:
    """Stop the idle workers (they are made again when needed)."""
    with _IDLE_LOCK:
        workers = list(_IDLE)
        _IDLE.clear()
    for worker in workers:
        worker.stop()


atexit.register(stop_workers)


def serve(fd: int, memory_mib: int) -> None:
    """The worker's loop (in the worker process, on socket ``fd``): import the parsers,
    cap the address space, then parse each request and answer ``("ok", sections)`` or
    the error."""
    import importlib

    _die_with_parent()
    for name in _PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # an extra that is not installed: its parser says so when asked
    connection = Connection(fd)
    try:
        import resource

        limit = memory_mib * _MIB
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass  # no address-space limit here: the wall clock still bounds the parse
    from citewise.parsing.budget import set_budget_extender

    set_budget_extender(lambda seconds: connection.send(("extend", seconds)))
    connection.send("ready")
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        try:
            vision.apply_env(request.pop("vision_env", {}))
            parse = request.pop("parse")
            reply: tuple[Any, ...] = ("ok", parse(**request))
        except CitewiseError as error:
            reply = ("error", type(error).__name__, str(error))
        except MemoryError:
            reply = ("memory",)
        except RecursionError:
            name = request["source"].path
            reply = ("error", "SourceError", f"{name}: nested too deeply to parse")
        except Exception as error:  # a parser's bug: reported, never a traceback to users
            reply = ("failed", f"{type(error).__name__}: {error}")
        try:
            connection.send(reply)
        except MemoryError:
            connection.send(("memory",))
        if reply[0] == "memory":
            os._exit(0)  # a worker that ran out of memory may be left in a bad state


def _die_with_parent() -> None:
    """On Linux, have the system kill this worker when the process it parses for dies
    (a killed indexer leaves no parse running on)."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the worker ends at its next read of the closed socket
