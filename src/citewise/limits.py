"""Size limits on what citewise ingests, checked before the work they would make expensive."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from citewise.config import MAX_SECTIONS, PARSE_MEMORY_MIB, PARSE_SECONDS, ParseSettings
from citewise.errors import TooLargeError

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_OCR_PAGES",
    "OCR_PAGE_SECONDS",
    "MAX_PDF_CONTENT_BYTES",
    "MAX_PDF_PAGE_CONTENT_BYTES",
    "MAX_PDF_TABLE_CONTENT_BYTES",
    "MAX_PDF_TABLE_PAGES",
    "MAX_PDF_PAGES",
    "MAX_TABLE_CELLS",
    "MAX_TABLE_COLUMNS",
    "MAX_ZIP_RATIO",
    "ParseBudget",
    "MAX_SECTIONS",
    "MAX_TEXT_BYTES",
    "MAX_UNPACKED_BYTES",
    "check_file_size",
    "check_section_count",
    "check_text_size",
    "check_table_shape",
    "check_unpacked_size",
    "check_zip_members",
    "max_sections",
    "read_limited",
]

MIB = 1024 * 1024
# A file larger than this is refused before any parser sees it.
MAX_FILE_BYTES = 16 * MIB
# Parsed text (UTF-8) larger than this is refused before chunking, embedding or storing.
MAX_TEXT_BYTES = 4 * MIB
# Sections per document (each heading starts one): more is a generated or hostile file
# (MAX_SECTIONS, a setting: citewise.config.ParseSettings).
# A zipped format (DOCX) may expand to at most this much, so a zip bomb is refused unread:
# four times the file limit (pictures barely compress; a document's XML takes the rest).
MAX_UNPACKED_BYTES = 4 * MAX_FILE_BYTES
# A zip member over ZIP_RATIO_FLOOR bytes may expand at most this many times: Word's XML
# deflates about 5-20 to 1; 345 to 1 (29 KB to 10 MB) is a file made to be expensive.
MAX_ZIP_RATIO = 100
ZIP_RATIO_FLOOR = MIB
# Pages per PDF, and bytes of decoded content stream per page (a page of text draws 2-50 KB;
# pypdf reads drawing operators at about 60 KB/s, so 1 MiB is already seconds of work).
MAX_PDF_PAGES = 2000
MAX_PDF_PAGE_CONTENT_BYTES = MIB
# Decoded content of all pages together: more than pypdf reads within a parse budget.
MAX_PDF_CONTENT_BYTES = 16 * MIB
# Pages given to the (slow) table finder per PDF, and the largest page content it reads:
# a page of 100,000 drawing operators is a figure, not a table, and costs minutes there.
MAX_PDF_TABLE_PAGES = 20
MAX_PDF_TABLE_CONTENT_BYTES = 256 * 1024
# A table (CSV, DOCX, PDF) wider or larger than this is data, not documentation, and its
# header repeated in every chunk would multiply it.
MAX_TABLE_COLUMNS = 1000
MAX_TABLE_CELLS = 500_000
# Pages recognised by OCR per PDF, and the time each adds to the parse budget (Tesseract
# takes a second or more a page; 2,000 blank pages would hold a worker for many minutes).
MAX_OCR_PAGES = 200
OCR_PAGE_SECONDS = 15.0
# One parse's wall-clock and memory budget (see citewise.parsing.worker): PARSE_SECONDS
# and PARSE_MEMORY_MIB, settings (citewise.config.ParseSettings).


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


def check_zip_members(name: str | Path, members: Iterable[tuple[str, int, int]]) -> None:
    """Refuse a zipped file (DOCX) from its members' (name, compressed size, size) before
    anything is inflated: over :data:`MAX_UNPACKED_BYTES` in all, or a large member that
    expands more than :data:`MAX_ZIP_RATIO` times.

    Python's ``zipfile`` never inflates a member past the size its archive declares (it
    stops there and fails the CRC check), so the declared sizes bound the work.
    """
    total = 0
    for member, packed, size in members:
        total += size
        if size > ZIP_RATIO_FLOOR and size > MAX_ZIP_RATIO * max(packed, 1):
            raise TooLargeError(
                f"{name}: {member} expands {size / max(packed, 1):,.0f} times "
                f"({_size(packed)} to {_size(size)}), over the limit of {MAX_ZIP_RATIO} "
                "times; refused before parsing, nothing was indexed"
            )
    check_unpacked_size(name, total)


def check_table_shape(name: str | Path, columns: int, cells: int) -> None:
    """Refuse a table over :data:`MAX_TABLE_COLUMNS` columns or :data:`MAX_TABLE_CELLS` cells."""
    if columns > MAX_TABLE_COLUMNS:
        raise TooLargeError(
            f"{name}: a table of {columns:,} columns, over the limit of "
            f"{MAX_TABLE_COLUMNS:,}; refused, nothing was indexed"
        )
    if cells > MAX_TABLE_CELLS:
        raise TooLargeError(
            f"{name}: a table of {cells:,} cells, over the limit of {MAX_TABLE_CELLS:,}; "
            "refused, nothing was indexed"
        )


class ParseBudget:
    """What one parse may spend: ``seconds`` of wall clock (``CITEWISE_PARSE_SECONDS``,
    default 10) and ``memory_mib`` of address space (``CITEWISE_PARSE_MEMORY_MB``, default
    512); past either the parse is stopped and the file refused."""

    def __init__(self, seconds: float = PARSE_SECONDS, memory_mib: int = PARSE_MEMORY_MIB):
        self.seconds = seconds
        self.memory_mib = memory_mib

    @classmethod
    def from_env(cls) -> ParseBudget:
        settings = ParseSettings.from_env()
        return cls(settings.seconds, settings.memory_mib)


def max_sections() -> int:
    """The most sections one document may have (``CITEWISE_MAX_SECTIONS``, default 50,000):
    past it a file is refused rather than filling the index with fragments."""
    return ParseSettings.from_env().max_sections


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
