"""A PDF page's ruled tables as Markdown tables, in reading order with the text around them."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from citewise.config import Limits
from citewise.parsing.common import markdown_table

if TYPE_CHECKING:
    from pypdf import PdfReader

__all__ = ["table_pages"]

# Path-painting operators (a rectangle, a line, a stroke): a page without any draws no ruled
# table, so pdfplumber (many times slower than pypdf) never reads it.
_DRAWS_RE = re.compile(rb"(?:^|\s)(?:re|l|S|s|f|F|B)(?:\s|$)")


def table_pages(
    data: bytes, reader: PdfReader, sizes: Sequence[int], limits: Limits
) -> dict[int, str]:
    """Page index → the page's text with each ruled table as a Markdown table, for the pages
    that have one (the others keep pypdf's text). Tables are found by their drawn cell borders
    (pdfplumber's ``lines`` strategy); a table of aligned text without rules stays text.

    ``sizes`` are the pages' decoded content sizes: pages over
    ``limits.max_pdf_table_content_bytes`` (drawings) are not searched, and only the first
    ``limits.max_pdf_table_pages`` pages that draw are (the table finder takes a fraction of
    a second a page; the other pages keep their text, tables read as lines).
    """
    most = limits.max_pdf_table_pages
    candidates = [
        index
        for index, page in enumerate(reader.pages)
        if sizes[index] <= limits.max_pdf_table_content_bytes and _draws(page)
    ][:most]
    if not candidates:
        return {}
    import pdfplumber

    if len(reader.pages) > len(candidates) + most:
        # pdfminer parses every page object of the file to find the few asked for (5 ms
        # each: 1,000 pages are seconds); a copy with the candidates only is read instead.
        data = _only(reader, candidates)
        numbers = list(range(len(candidates)))
    else:
        numbers = candidates
    found: dict[int, str] = {}
    with pdfplumber.open(io.BytesIO(data)) as document:
        for index, number in zip(candidates, numbers, strict=True):
            page = document.pages[number]
            text = _page_with_tables(page)
            if text is not None:
                found[index] = text
            page.close()  # frees its parsed objects: a long PDF is read page by page
    return found


def _only(reader: PdfReader, indexes: Sequence[int]) -> bytes:
    """A PDF of the pages of ``reader`` at ``indexes``, in that order."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for index in indexes:
        writer.add_page(reader.pages[index])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _draws(page: Any) -> bool:
    try:
        contents = page.get_contents()
        return contents is not None and bool(_DRAWS_RE.search(contents.get_data()))
    except Exception:  # an unreadable content stream has no table we could read either
        return False


def _page_with_tables(page: Any) -> str | None:
    tables = [t for t in page.find_tables() if len(t.rows) >= 2]
    if not tables:
        return None
    boxes = [table.bbox for table in tables]

    def outside(obj: dict[str, Any]) -> bool:
        if obj.get("object_type") != "char":
            return True
        x, y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
        return not any(x0 <= x <= x1 and top <= y <= bottom for x0, top, x1, bottom in boxes)

    blocks: list[tuple[float, str, bool]] = [
        (line["top"], line["text"], False) for line in page.filter(outside).extract_text_lines()
    ]
    for table in tables:
        rows = _rows(table.extract())
        if rows:
            blocks.append((table.bbox[1], markdown_table(rows), True))
    blocks.sort(key=lambda block: block[0])
    text = ""
    previous_table = True
    for _, block, is_table in blocks:
        # A table is a block of its own (blank lines around it); text lines stay lines.
        separator = "\n\n" if is_table or previous_table else "\n"
        text = f"{text}{separator}{block}" if text else block
        previous_table = is_table
    return text


def _rows(cells: Sequence[Sequence[str | None]]) -> list[list[str]]:
    rows = [[cell or "" for cell in row] for row in cells]
    return [row for row in rows if any(cell.strip() for cell in row)]
