"""The checks of the size limits on what citewise ingests, each made before the work it would
make expensive. The limits themselves are values (:class:`citewise.config.Limits`, part of
the parse settings): every check takes the ones its caller was given."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from citewise.config import MIB, Limits
from citewise.errors import TooLargeError

__all__ = [
    "MIB",
    "Limits",
    "check_file_size",
    "check_section_count",
    "check_table_shape",
    "check_text_size",
    "check_unpacked_size",
    "check_zip_members",
    "read_limited",
]

# Only a zip member larger than this is held to the expansion ratio (small XML parts of a
# document deflate far more than its text does, and cost nothing).
_ZIP_RATIO_FLOOR = MIB


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


def check_file_size(limits: Limits, name: str | Path, size: int) -> None:
    """Refuse a file of ``size`` bytes if it is over ``limits.max_file_bytes``."""
    if size > limits.max_file_bytes:
        raise TooLargeError(
            f"{name}: file is {_over(size, limits.max_file_bytes)}; "
            "refused before parsing, nothing was indexed"
        )


def check_text_size(limits: Limits, name: str | Path, texts: Iterable[str]) -> None:
    """Refuse parsed ``texts`` whose UTF-8 size adds up to more than ``limits.max_text_bytes``."""
    total = 0
    for text in texts:
        total += len(text.encode("utf-8"))
        if total > limits.max_text_bytes:
            raise TooLargeError(
                f"{name}: parsed text is over the {_size(limits.max_text_bytes)} limit; "
                "refused before chunking, nothing was indexed"
            )


def check_unpacked_size(limits: Limits, name: str | Path, size: int) -> None:
    """Refuse an archive-based file whose members expand to more than the unpacked limit."""
    if size > limits.max_unpacked_bytes:
        raise TooLargeError(
            f"{name}: expands to {_over(size, limits.max_unpacked_bytes)}; "
            "refused before parsing, nothing was indexed"
        )


def check_zip_members(
    limits: Limits, name: str | Path, members: Iterable[tuple[str, int, int]]
) -> None:
    """Refuse a zipped file (DOCX) from its members' (name, compressed size, size) before
    anything is inflated: over ``limits.max_unpacked_bytes`` in all, or a member over 1 MiB
    that expands more than ``limits.max_zip_ratio`` times.

    Python's ``zipfile`` never inflates a member past the size its archive declares (it
    stops there and fails the CRC check), so the declared sizes bound the work.
    """
    total = 0
    ratio = limits.max_zip_ratio
    for member, packed, size in members:
        total += size
        if size > _ZIP_RATIO_FLOOR and size > ratio * max(packed, 1):
            raise TooLargeError(
                f"{name}: {member} expands {size / max(packed, 1):,.0f} times "
                f"({_size(packed)} to {_size(size)}), over the limit of {ratio} "
                "times; refused before parsing, nothing was indexed"
            )
    check_unpacked_size(limits, name, total)


def check_table_shape(limits: Limits, name: str | Path, columns: int, cells: int) -> None:
    """Refuse a table over ``limits.max_table_columns`` columns or ``max_table_cells`` cells."""
    if columns > limits.max_table_columns:
        raise TooLargeError(
            f"{name}: a table of {columns:,} columns, over the limit of "
            f"{limits.max_table_columns:,}; refused, nothing was indexed"
        )
    if cells > limits.max_table_cells:
        raise TooLargeError(
            f"{name}: a table of {cells:,} cells, over the limit of "
            f"{limits.max_table_cells:,}; refused, nothing was indexed"
        )


def check_section_count(limits: Limits, name: str | Path, count: int) -> None:
    """Refuse a document with more sections than ``limits.max_sections``
    (``CITEWISE_MAX_SECTIONS``): past it a file is refused rather than filling the index
    with fragments."""
    if count > limits.max_sections:
        raise TooLargeError(
            f"{name}: {count:,} sections, over the limit of {limits.max_sections:,} per "
            "document (CITEWISE_MAX_SECTIONS); refused, nothing was indexed"
        )


def read_limited(limits: Limits, path: Path) -> bytes:
    """The bytes of ``path``; a file over ``limits.max_file_bytes`` is refused, not read."""
    check_file_size(limits, path, path.stat().st_size)
    with path.open("rb") as handle:
        # One byte past the limit catches a file that grew after the size check.
        data = handle.read(limits.max_file_bytes + 1)
    check_file_size(limits, path, len(data))
    return data
