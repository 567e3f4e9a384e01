"""Split a PDF into sections at its outline's headings (or per page), each on one page."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from citewise.config import Limits
from citewise.errors import MissingExtraError, SourceError, TooLargeError
from citewise.models import Section
from citewise.parsing.budget import extend_budget
from citewise.parsing.common import BytesOnlyParser, file_page, file_url, title_from_name
from citewise.parsing.doc_metadata import pdf_metadata, with_metadata
from citewise.parsing.ocr import ocr_available, ocr_pages
from citewise.parsing.pdf_figures import figure_texts
from citewise.parsing.pdf_tables import table_pages
from citewise.parsing.pdf_work import check_pdf_work
from citewise.parsing.vision import page_image_texts, vision_model

if TYPE_CHECKING:
    from pypdf import PdfReader

__all__ = ["PdfParser", "parse_pdf"]

# Titles that PDF writers fill in for the user, not the document's real title: placeholders
# such as ReportLab's "untitled" and "(anonymous)", and application-made ones.
_GENERATED_TITLE_RE = re.compile(
    r"^[(\[<]*(?:untitled|anonymous|unknown|unspecified|none|null|no title|document\d*)[)\]>]*$"
    r"|^(?:microsoft (?:word|powerpoint|excel) - .*|.*\.(?:docx?|pdf|odt|rtf|tex|html?))$",
    re.IGNORECASE,
)
_BLANK_LINES_RE = re.compile(r"\n{3,}")
# An outline deeper than this is malformed or hostile; its deeper entries are ignored.
_MAX_OUTLINE_DEPTH = 16


@dataclass(frozen=True)
class _Entry:
    """An outline heading on page index ``page``: its title at ``start``, its text at ``body``."""

    page: int
    start: int
    body: int
    path: tuple[str, ...]


class PdfParser(BytesOnlyParser):
    """PDF files (``.pdf``), read from their bytes with ``pypdf``: see :func:`parse_pdf`."""

    format_name = "PDF"
    takes_limits = True

    def parse_bytes(
        self,
        data: bytes,
        *,
        doc_id: str,
        site_url: str,
        version: str | None,
        scope: str = "",
        limits: Limits | None = None,
    ) -> list[Section]:
        return parse_pdf(
            data, doc_id=doc_id, site_url=site_url, version=version, scope=scope, limits=limits
        )


def parse_pdf(
    data: bytes,
    *,
    doc_id: str,
    site_url: str,
    version: str | None,
    scope: str = "",
    limits: Limits | None = None,
) -> list[Section]:
    """Split the PDF ``data`` into sections that each hold text from one page.

    With an outline (bookmarks), a section starts at each outline entry (at the entry's title
    on its page, when the title can be found there) and runs to the next one; a heading whose
    text goes on over a page break continues in a section of the same heading for each page,
    so every section's ``page_number`` is the page its text is on. Text before the first entry,
    or every page of a PDF without an outline, becomes a section titled ``Page N``. Anchors are
    ``page=N``, the standard PDF open parameter (``file.pdf#page=N``).

    Ruled tables become Markdown tables, and a tagged PDF's figure descriptions (alt text)
    are added to their page's text as ``[Image: …]``. Pages without a text layer (scans) are
    recognised by OCR when the ``ocr`` extra and Tesseract are installed.

    Raises:
        SourceError: the PDF cannot be read, is encrypted, or has no text and cannot be
            recognised (the message names the ``ocr`` extra and Tesseract when missing).
        TooLargeError: it has more pages or content than :func:`check_pdf_work` allows,
            or more pages to recognise than ``limits.max_ocr_pages`` (``limits`` default:
            :class:`Limits`' defaults).
    """
    limits = limits or Limits()
    try:
        from pypdf import PdfReader
    except ImportError:
        raise MissingExtraError("pypdf", "formats", "PDF parsing") from None

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise SourceError(f"{doc_id}: the PDF is encrypted with a password")
        sizes = check_pdf_work(doc_id, reader, limits)
        pages = [_clean(page.extract_text()) for page in reader.pages]
        for index, text in table_pages(data, reader, sizes, limits).items():
            pages[index] = _clean(text)
        figures = figure_texts(reader)
        title = _document_title(reader) or title_from_name(doc_id)
        metadata = pdf_metadata(reader)
    except (SourceError, MemoryError, RecursionError):
        raise
    except Exception as error:  # pypdf raises many kinds of error on a malformed file
        raise SourceError(f"{doc_id}: not a readable PDF ({error})") from error
    pages = _recognised(data, pages, doc_id, limits)
    if (vision := vision_model()) is not None:
        for index, texts in page_image_texts(reader, vision).items():
            figures.setdefault(index, []).extend(texts)
    for index, texts in figures.items():
        pages[index] = "\n\n".join([pages[index], *texts]).strip()
    try:
        entries = _outline(reader, pages)
    except Exception as error:
        raise SourceError(f"{doc_id}: not a readable PDF ({error})") from error

    url = file_url(doc_id, site_url, version)
    page = file_page(doc_id)

    def section(heading: tuple[str, ...], number: int, text: str) -> Section:
        path = heading if heading and heading[0] == title else (title, *heading)
        return Section(
            doc_id=doc_id,
            title=heading[-1],
            heading_path=path,
            level=len(heading),
            anchor=f"page={number}",
            url=f"{url}#page={number}",
            page=page,
            text=text,
            scope=scope,
            page_number=number,
        )

    sections: list[Section] = []
    first = entries[0] if entries else _Entry(len(pages), 0, 0, ())
    # Before the first heading (a cover, a contents page), or everything without an outline.
    for index in range(min(first.page + 1, len(pages))):
        end = first.start if index == first.page else len(pages[index])
        text = pages[index][:end].strip()
        if text:
            sections.append(section((f"Page {index + 1}",), index + 1, text))
    for position, entry in enumerate(entries):
        after = entries[position + 1] if position + 1 < len(entries) else None
        last_page = after.page if after else len(pages) - 1
        emitted = False
        for index in range(entry.page, last_page + 1):
            start = entry.body if index == entry.page else 0
            end = after.start if after and index == after.page else len(pages[index])
            text = pages[index][start:end].strip()
            # A heading always gets its section, even with no text, so it can be found.
            if text or not emitted:
                sections.append(section(entry.path, index + 1, text))
                emitted = True
    return with_metadata(sections, metadata)


def _recognised(data: bytes, pages: list[str], doc_id: str, limits: Limits) -> list[str]:
    """``pages`` with the pages that have no text recognised by OCR, where OCR is available;
    a PDF with no text at all and no OCR is refused, naming what to install."""
    empty = [index for index, text in enumerate(pages) if not text]
    if not empty:
        return pages
    missing = ocr_available()
    if missing is not None:
        if len(empty) < len(pages):
            return pages  # the text it has is indexed; its scanned pages need OCR
        raise SourceError(f"{doc_id}: the PDF has no text layer (scanned?). {missing}")
    if len(empty) > limits.max_ocr_pages:
        raise TooLargeError(
            f"{doc_id}: {len(empty):,} pages need OCR, over the limit of "
            f"{limits.max_ocr_pages:,} per PDF; refused, nothing was indexed"
        )
    # OCR takes seconds a page: the parse's budget grows by a fixed allowance per page.
    extend_budget(len(empty) * limits.ocr_page_seconds)
    recognised = list(pages)
    for index, text in ocr_pages(data, empty, name=doc_id).items():
        recognised[index] = _clean(text)
    if not any(recognised):
        raise SourceError(f"{doc_id}: the PDF has no text, and OCR found none on its pages")
    return recognised


def _clean(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return _BLANK_LINES_RE.sub("\n\n", "\n".join(lines)).strip()


def _document_title(reader: PdfReader) -> str:
    metadata = reader.metadata
    title = " ".join(str(metadata.title).split()) if metadata and metadata.title else ""
    return "" if _GENERATED_TITLE_RE.match(title) else title


def _outline(reader: PdfReader, pages: Sequence[str]) -> list[_Entry]:
    """The outline's entries in reading order, each placed at its title on its page."""
    found: list[tuple[int, int, tuple[str, ...]]] = []

    def walk(items: Sequence[Any], parents: tuple[str, ...], depth: int) -> None:
        current: tuple[str, ...] = parents
        for item in items:
            if isinstance(item, list):
                # A nested list holds the children of the entry just before it.
                if depth < _MAX_OUTLINE_DEPTH:
                    walk(item, current, depth + 1)
                continue
            title = " ".join(str(item.title or "").split())
            number = reader.get_destination_page_number(item)
            if not title or number is None or not 0 <= number < len(pages):
                continue
            current = (*parents, title)
            found.append((number, len(found), current))

    walk(reader.outline, (), 0)
    # Reading order, not outline order: sort by page, keeping outline order within a page.
    found.sort(key=lambda item: (item[0], item[1]))
    entries: list[_Entry] = []
    for number, _, path in found:
        previous = entries[-1] if entries else None
        # Search after the previous heading on the same page, so headings keep their order.
        after = previous.body if previous and previous.page == number else 0
        span = _find_title(pages[number], path[-1], after)
        start, body = span if span else (after, after)
        entries.append(_Entry(number, start, body, path))
    return entries


def _find_title(text: str, title: str, start: int) -> tuple[int, int] | None:
    """Where ``title`` (spacing and case aside) starts a line of ``text`` from ``start``.

    Returns (its start, its end). Only a line start counts: the same words inside a sentence
    are not the heading.
    """
    words = title.split()
    if not words:
        return None
    body = r"\s+".join(re.escape(word) for word in words)
    pattern = re.compile(rf"^[ \t]*{body}", re.IGNORECASE | re.MULTILINE)
    match = pattern.search(text, start)
    return (match.start(), match.end()) if match else None
