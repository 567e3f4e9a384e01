"""What a crawler reads from a page besides its content: links, canonical URL, robots meta,
charset; and the one normalization that decides when two URLs are the same page."""

from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit, urlunsplit

__all__ = ["PageLinks", "decode_html", "normalize_url", "read_links"]

_CHARSET_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_HEADER_CHARSET_RE = re.compile(r"charset\s*=\s*\"?([A-Za-z0-9_.:-]+)", re.I)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_REFRESH_URL_RE = re.compile(r"url\s*=\s*(.+)$", re.I)


@dataclass
class PageLinks:
    """The links of a page (absolute, normalized, in order, once each) and its directives."""

    links: list[str] = field(default_factory=list)
    canonical: str = ""
    noindex: bool = False
    nofollow: bool = False
    # ``<meta http-equiv="refresh" content="0; url=…">``: a redirect stub (MkDocs'
    # redirects plugin, moved pages), not content of its own.
    refresh: str = ""
    # A generated listing of the source code (Sphinx viewcode's ``_modules`` pages, marked by
    # their ``viewcode-back`` links): the API reference already covers it from the docs, and
    # whole modules of code outrank the prose that explains them.
    source_listing: bool = False


# Link discovery reads tags by pattern, not with a full parser: a page with 10,000 links
# is read in milliseconds, and malformed markup cannot stop it.
_SKIPPED_RE = re.compile(r"<!--.*?-->|<(script|style)\b.*?</\1\s*>", re.I | re.S)
_TAG_RE = re.compile(r"<(a|area|base|link|meta)\s([^>]*)>", re.I)
_ATTR_RE = re.compile(r"""([a-zA-Z_:][-\w:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""")


def _attributes(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for match in _ATTR_RE.finditer(text):
        value = match.group(2) if match.group(2) is not None else match.group(3)
        value = value if value is not None else match.group(4)
        found.setdefault(match.group(1).lower(), html.unescape(value or "").strip())
    return found


def read_links(page: str, url: str) -> PageLinks:
    """The http(s) links of the page at ``url`` (``<base href>`` honoured, ``rel=nofollow``
    links left out), fragments and queries dropped; none when the page says ``nofollow``."""
    found = PageLinks()
    base = url
    hrefs: list[str] = []
    for match in _TAG_RE.finditer(_SKIPPED_RE.sub(" ", page)):
        tag, values = match.group(1).lower(), _attributes(match.group(2))
        rel = values.get("rel", "").lower().split()
        if tag == "a" and "viewcode-back" in values.get("class", "").split():
            found.source_listing = True
        if tag == "base" and values.get("href") and not hrefs:
            base = urljoin(base, values["href"])
        elif tag in ("a", "area") and values.get("href") and "nofollow" not in rel:
            hrefs.append(values["href"])
        elif tag == "link" and "canonical" in rel and values.get("href"):
            found.canonical = normalize_url(urljoin(base, values["href"]))
        elif tag == "meta" and values.get("http-equiv", "").lower() == "refresh":
            target = _REFRESH_URL_RE.search(values.get("content", ""))
            if target:
                found.refresh = normalize_url(urljoin(base, target.group(1).strip("'\" ")))
        elif tag == "meta" and values.get("name", "").lower() in ("robots", "citewise"):
            directives = {d.strip() for d in values.get("content", "").lower().split(",")}
            found.noindex |= bool({"noindex", "none"} & directives)
            found.nofollow |= bool({"nofollow", "none"} & directives)
    if found.nofollow:
        return found
    seen: set[str] = set()
    join = _Joiner(base)
    for href in dict.fromkeys(hrefs):
        link = join(href)
        if link and link not in seen:
            seen.add(link)
            found.links.append(link)
    return found


class _Joiner:
    """``urljoin`` then :func:`normalize_url`, with a fast path for the common relative link
    (``../guide/``, ``api.html#x``): thousands of links per page stay cheap."""

    def __init__(self, base: str) -> None:
        self.base = base
        normalized = normalize_url(base)
        parts = urlsplit(normalized) if normalized else None
        self.origin = f"{parts.scheme}://{parts.netloc}" if parts else ""
        self.folder = parts.path[: parts.path.rindex("/") + 1] if parts else ""

    def __call__(self, href: str) -> str:
        path = href.split("#", 1)[0].split("?", 1)[0]
        head = path.split("/", 1)[0]
        if not self.origin or not path or path.startswith(("/", "\\")) or ":" in head:
            return normalize_url(urljoin(self.base, href))
        resolved = posixpath.normpath(self.folder + path)
        if resolved.startswith("//"):
            resolved = "/" + resolved.lstrip("/")
        if path.endswith(("/", "/.", "/..")) or path in (".", ".."):
            resolved = resolved.rstrip("/") + "/"
        return self.origin + resolved


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
