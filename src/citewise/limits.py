"""Size limits on what citewise ingests, checked before the work they would make expensive."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from citewise.errors import TooLargeError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_TEXT_BYTES",
    "MAX_UNPACKED_BYTES",
    "check_file_size",
    "check_text_size",
    "check_unpacked_size",
    "read_limited",
]

MIB = 1024 * 1024
# A file larger than this is refused before any parser sees it.
MAX_FILE_BYTES = 16 * MIB
# Parsed text (UTF-8) larger than this is refused before chunking, embedding or storing.
MAX_TEXT_BYTES = 4 * MIB
# A zipped format (DOCX) may expand to at most this much, so a zip bomb is refused unread.
MAX_UNPACKED_BYTES = 16 * MAX_FILE_BYTES


def _size(count: int) -> str:
    if count >= MIB:
        return f"{count / MIB:.1f} MiB"
    if count >= 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count} bytes"


def check_file_size(name: str | Path, size: int) -> None:
    """Refuse a file of ``size`` bytes if it is over :data:`MAX_FILE_BYTES`."""
    if size > MAX_FILE_BYTES:
        raise TooLargeError(
            f"{name}: file is {_size(size)}, over the {_size(MAX_FILE_BYTES)} limit; "
            "refused before parsing, nothing was indexed"
        )


def check_text_size(name: str | Path, texts: Iterable[str]) -> None:
    """Refuse parsed ``texts`` whose UTF-8 size adds up to more than :data:`MAX_TEXT_BYTES`."""
    total = 0
    for text in texts:
        total += len(text.encode("utf-8"))
        if total > MAX_TEXT_BYTES:
            raise TooLargeError(
                f"{name}: parsed text is over the {_size(MAX_TEXT_BYTES)} limit; "
                "refused before chunking, nothing was indexed"
            )


def check_unpacked_size(name: str | Path, size: int) -> None:
    """Refuse an archive-based file whose members expand to more than the unpacked limit."""
    if size > MAX_UNPACKED_BYTES:
        raise TooLargeError(
            f"{name}: expands to {_size(size)}, over the {_size(MAX_UNPACKED_BYTES)} limit; "
            "refused before parsing, nothing was indexed"
        )


def read_limited(path: Path) -> bytes:
    """The bytes of ``path``; a file over :data:`MAX_FILE_BYTES` is refused, not read."""
    check_file_size(path, path.stat().st_size)
    with path.open("rb") as handle:
        # One byte past the limit catches a file that grew after the size check.
        data = handle.read(MAX_FILE_BYTES + 1)
    check_file_size(path, len(data))
    return data
