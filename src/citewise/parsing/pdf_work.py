"""How much work a PDF asks for, measured before any text is extracted: its pages and the
decoded size of each page's content stream (a page shared stream counts on every page)."""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

from citewise.config import Limits
from citewise.errors import TooLargeError

if TYPE_CHECKING:
    from pypdf import PdfReader

__all__ = ["check_pdf_work", "content_size"]

_CHUNK = 64 * 1024


def check_pdf_work(doc_id: str, reader: PdfReader, limits: Limits) -> list[int]:
    """Each page's decoded content size, after refusing a PDF over ``limits.max_pdf_pages``
    pages, with a page over ``limits.max_pdf_page_content_bytes`` or over
    ``limits.max_pdf_content_bytes`` of content in all (pypdf re-reads a shared stream for
    each page that draws it: 25 pages of one 5 MB stream are 125 MB to read)."""
    count = len(reader.pages)
    if count > limits.max_pdf_pages:
        raise TooLargeError(
            f"{doc_id}: {count:,} pages, over the limit of {limits.max_pdf_pages:,} per PDF; "
            "refused before parsing, nothing was indexed"
        )
    per_page, in_all = limits.max_pdf_page_content_bytes, limits.max_pdf_content_bytes
    sizes: list[int] = []
    total = 0
    for number, page in enumerate(reader.pages, start=1):
        size = content_size(page, per_page)
        if size > per_page:
            raise TooLargeError(
                f"{doc_id}: page {number} draws more than "
                f"{per_page // 1024:,} KiB of content, the limit per page; "
                "refused before parsing, nothing was indexed"
            )
        total += size
        if total > in_all:
            raise TooLargeError(
                f"{doc_id}: its pages draw more than "
                f"{in_all // (1024 * 1024)} MiB of content, the limit per PDF "
                f"(reached at page {number}); refused before parsing, nothing was indexed"
            )
        sizes.append(size)
    return sizes


def content_size(page: Any, cap: int) -> int:
    """The decoded size of ``page``'s content streams, or a number over ``cap`` as soon as
    it is passed (a Flate stream is inflated in pieces and thrown away, never held whole)."""
    contents = page.get("/Contents")
    if contents is None:
        return 0
    contents = contents.get_object()
    streams = contents if isinstance(contents, list) else [contents]
    total = 0
    for stream in streams:
        total += _stream_size(stream.get_object(), cap - total + 1)
        if total > cap:
            break
    return total


def _stream_size(stream: Any, cap: int) -> int:
    filters = stream.get("/Filter")
    names = filters if isinstance(filters, list) else [filters] if filters else []
    raw = getattr(stream, "_data", b"")
    if [str(name) for name in names] == ["/FlateDecode"] and "/DecodeParms" not in stream:
        inflater = zlib.decompressobj()
        size = 0
        try:
            for start in range(0, len(raw), _CHUNK):
                data = inflater.decompress(raw[start : start + _CHUNK], cap + 1 - size)
                size += len(data)
                while inflater.unconsumed_tail and size <= cap:
                    data = inflater.decompress(inflater.unconsumed_tail, cap + 1 - size)
                    size += len(data)
                if size > cap:
                    return size
        except zlib.error:
            return size  # pypdf will report the damaged stream when it reads the page
        return size
    if not names:
        return len(raw)
    try:
        return len(stream.get_data())
    except Exception:  # an undecodable stream: pypdf reports it when it reads the page
        return 0
