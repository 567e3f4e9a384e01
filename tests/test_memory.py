"""Tests for giving freed heap memory back to the operating system."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from citewise.memory import release_free_memory


def _resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only"
)
def test_freed_heap_memory_is_returned_after_release() -> None:
    # 80 MB in 4 KiB blocks (glibc's heap, not separately mapped), all freed but the last,
    # which keeps the heap from shrinking by itself: the pages stay resident until released.
    blocks = [bytearray(4096) for _ in range(20_000)]
    last = blocks[-1]
    del blocks
    before = _resident_mb()
    assert release_free_memory() is True
    assert _resident_mb() < before - 40
    assert len(last) == 4096


def test_release_is_harmless_to_call_again() -> None:
    release_free_memory()
    assert isinstance(release_free_memory(), bool)
