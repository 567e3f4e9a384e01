"""What a crawler reads from a page besides its content: links, canonical URL, robots meta,
charset; and the one normalization that decides when two URLs are the same page."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit, urlunsplit

__all__ = ["PageLinks", "decode_html", "normalize_url", "read_links"]

_CHARSET_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_HEADER_CHARSET_RE = re.compile(r"charset\s*=\s*\"?([A-Za-z0-9_.:-]+)", re.I)
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass
class PageLinks:
    """The links of a page (absolute, normalized, in order, once each) and its directives."""

    links: list[str] = field(default_factory=list)
    canonical: str = ""
    noindex: bool = False
    nofollow: bool = False


class _LinkReader(HTMLParser):
    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.found = PageLinks()
        self._seen: set[str] = set()
        self._hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: (value or "") for name, value in attrs}
        if tag == "base" and values.get("href") and not self._hrefs:
            self.base = urljoin(self.base, values["href"].strip())
        elif tag in ("a", "area") and values.get("href"):
            if "nofollow" not in values.get("rel", "").lower().split():
                self._hrefs.append(values["href"].strip())
        elif tag == "link" and "canonical" in values.get("rel", "").lower().split():
            self.found.canonical = values.get("href", "").strip()
        elif tag == "meta" and values.get("name", "").lower() in ("robots", "citewise"):
            directives = {d.strip() for d in values.get("content", "").lower().split(",")}
            self.found.noindex |= bool({"noindex", "none"} & directives)
            self.found.nofollow |= bool({"nofollow", "none"} & directives)

    def result(self) -> PageLinks:
        for href in self._hrefs:
            url = normalize_url(urljoin(self.base, href))
            if url and url not in self._seen:
                self._seen.add(url)
                self.found.links.append(url)
        if self.found.canonical:
            self.found.canonical = normalize_url(urljoin(self.base, self.found.canonical))
        return self.found


def read_links(html: str, url: str) -> PageLinks:
    """The http(s) links of the page at ``url`` (``<base href>`` honoured), fragments and
    queries dropped; none when the page says ``nofollow``."""
    reader = _LinkReader(url)
    try:
        reader.feed(html)
        reader.close()
    except (AssertionError, ValueError):
        pass  # malformed markup: keep what was read up to it
    found = reader.result()
    if found.nofollow:
        found.links = []
    return found


def normalize_url(url: str) -> str:
    """``url`` as the page's identity: http(s) only, host lowercased, default port dropped,
    ``.``/``..`` segments resolved, query and fragment dropped (a docs page is the same page
    whatever its query string); ``""`` for anything else (``mailto:``, ``javascript:``)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return ""
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return ""
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    path = parts.path or "/"
    resolved = posixpath.normpath(path)
    if resolved.startswith("//"):
        resolved = "/" + resolved.lstrip("/")
    if path.endswith("/") and not resolved.endswith("/"):
        resolved += "/"
    return urlunsplit((scheme, host, resolved, "", ""))


def decode_html(body: bytes, content_type: str) -> str:
    """The page's text: the charset of its Content-Type, else of its ``<meta charset>``,
    else UTF-8; undecodable bytes replaced (never an error)."""
    match = _HEADER_CHARSET_RE.search(content_type)
    charset = match.group(1) if match else ""
    if not charset:
        sniffed = _CHARSET_RE.search(body[:4096])
        charset = sniffed.group(1).decode("ascii", "replace") if sniffed else "utf-8"
    if body.startswith(b"\xef\xbb\xbf"):
        charset, body = "utf-8", body[3:]
    try:
        return body.decode(charset, "replace")
    except LookupError:
        return body.decode("utf-8", "replace")
