"""Sitemaps (sitemaps.org): the page URLs of a ``urlset``, the sitemaps of an index, gzip or not."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
import zlib
from dataclasses import dataclass

from citewise.errors import SourceError, TooLargeError

__all__ = ["Sitemap", "gunzip_capped", "parse_sitemap"]

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Sitemap:
    """What one sitemap file lists: page URLs, or (an index) other sitemaps."""

    locations: tuple[str, ...]
    is_index: bool = False


def gunzip_capped(data: bytes, max_bytes: int, name: str) -> bytes:
    """``data`` inflated (every gzip member), refused once more than ``max_bytes`` come out:
    a small file that inflates to gigabytes is never held whole."""
    out = bytearray()
    while data:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += inflater.decompress(data, max_bytes - len(out) + 1)
        except zlib.error as error:
            raise SourceError(f"{name}: not valid gzip ({error})") from None
        if len(out) > max_bytes:
            raise TooLargeError(f"{name}: inflates to more than {max_bytes:,} bytes")
        data = inflater.unused_data if inflater.eof else b""
    return bytes(out)


def parse_sitemap(data: bytes, name: str, *, max_bytes: int) -> Sitemap:
    """The URLs ``data`` lists: XML (``urlset`` or ``sitemapindex``, any namespace), gzipped
    or not, or a plain-text sitemap (one URL a line).

    Raises:
        SourceError: not a sitemap, or XML with a DOCTYPE (entities are never expanded).
        TooLargeError: inflates to more than ``max_bytes``.
    """
    if data.startswith(_GZIP_MAGIC):
        data = gunzip_capped(data, max_bytes, name)
    head = data.lstrip()[:1]
    if head != b"<":
        lines = data.decode("utf-8", "replace").splitlines()
        found = tuple(
            line.strip() for line in lines if line.strip().startswith(("http://", "https://"))
        )
        if not found:
            raise SourceError(f"{name}: not a sitemap (neither XML nor a list of URLs)")
        return Sitemap(found)
    if b"<!DOCTYPE" in data[:4096].upper() or b"<!ENTITY" in data.upper():
        raise SourceError(f"{name}: a sitemap with a DOCTYPE or entities is refused")
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as error:
        raise SourceError(f"{name}: not valid XML ({error})") from None
    kind = _local(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        raise SourceError(f"{name}: not a sitemap (root element <{kind}>)")
    entry = "sitemap" if kind == "sitemapindex" else "url"
    locations = []
    for child in root:
        if _local(child.tag) != entry:
            continue
        for part in child:
            if _local(part.tag) == "loc" and part.text and part.text.strip():
                locations.append(part.text.strip())
    return Sitemap(tuple(locations), is_index=kind == "sitemapindex")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]
