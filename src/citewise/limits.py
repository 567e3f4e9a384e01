"""Size limits on what citewise ingests, checked before the work they would make expensive."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from citewise.errors import TooLargeError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_SECTIONS",
    "MAX_TEXT_BYTES",
    "MAX_UNPACKED_BYTES",
    "check_file_size",
    "check_section_count",
    "check_text_size",
    "check_unpacked_size",
    "max_sections",
    "read_limited",
]

MIB = 1024 * 1024
# A file larger than this is refused before any parser sees it.
MAX_FILE_BYTES = 16 * MIB
# Parsed text (UTF-8) larger than this is refused before chunking, embedding or storing.
MAX_TEXT_BYTES = 4 * MIB
# Sections per document (each heading starts one): more is a generated or hostile file.
MAX_SECTIONS = 50_000
# A zipped format (DOCX) may expand to at most this much, so a zip bomb is refused unread.
MAX_UNPACKED_BYTES = 16 * MAX_FILE_BYTES


def _size(count: int) -> str:
    if count >= MIB:
        return f"{count / MIB:.1f} MiB"
    if count >= 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count} bytes"


def _over(size: int, limit: int) -> str:
    # A size that rounds to the limit (an upload read only to the limit + 1 byte, say) would
    # read "16.0 MiB, over the 16.0 MiB limit": "more than" is what is known.
    if _size(size) != _size(limit):
        return f"{_size(size)}, over the {_size(limit)} limit"
    return f"more than the {_size(limit)} limit"


def check_file_size(name: str | Path, size: int) -> None:
    """Refuse a file of ``size`` bytes if it is over :data:`MAX_FILE_BYTES`."""
    if size > MAX_FILE_BYTES:
        raise TooLargeError(
            f"{name}: file is {_over(size, MAX_FILE_BYTES)}; "
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
            f"{name}: expands to {_over(size, MAX_UNPACKED_BYTES)}; "
            "refused before parsing, nothing was indexed"
        )


def max_sections() -> int:
    """The most sections one document may have (``CITEWISE_MAX_SECTIONS``, default 50,000):
    past it a file is refused rather than filling the index with fragments."""
    value = os.environ.get("CITEWISE_MAX_SECTIONS", "")
    return int(value) if value.isdigit() and int(value) > 0 else MAX_SECTIONS


def check_section_count(name: str | Path, count: int) -> None:
    """Refuse a document with more sections than :func:`max_sections`."""
    limit = max_sections()
    if count > limit:
        raise TooLargeError(
            f"{name}: {count:,} sections, over the limit of {limit:,} per document "
            "(CITEWISE_MAX_SECTIONS); refused, nothing was indexed"
        )


def read_limited(path: Path) -> bytes:
    """The bytes of ``path``; a file over :data:`MAX_FILE_BYTES` is refused, not read."""
    check_file_size(path, path.stat().st_size)
    with path.open("rb") as handle:
        # One byte past the limit catches a file that grew after the size check.
        data = handle.read(MAX_FILE_BYTES + 1)
    check_file_size(path, len(data))
    return data
