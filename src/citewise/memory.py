"""Freed heap memory given back to the operating system after a large piece of work."""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable


def release_free_memory() -> bool:
    """Ask the C allocator to return the memory freed so far (glibc's ``malloc_trim``).

    An ingest frees most of what it allocated when it returns (the parsed sections, windows,
    vectors and rows), but glibc keeps those pages resident, so a process stays at its
    ingest's size and what it allocates next (the dense matrix, the impact matrix) comes on
    top of it: at SciFact size a 193 MB peak instead of 152 (benchmarks/peers.md). Trimming
    takes milliseconds. False where there is no glibc (macOS, musl): nothing is done.
    """
    trim = _malloc_trim()
    return trim is not None and trim(0) in (0, 1)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The process's own symbols hold its C library's: ctypes.util.find_library would run
        # ldconfig in a child process first (tens of milliseconds of a short command).
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim
