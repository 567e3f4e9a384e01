"""Links to uploaded documents that work in any client: absolute, the same in the answer's
Markdown as in its annotations, and (on a server with API keys) signed so that a browser,
which cannot send a bearer key, opens them until they expire.

A document indexed from a folder or a site keeps its published URL. An uploaded file's
sections carry a URL without a scheme (``onboarding.docx#accounts``), which a third-party
chat page would resolve against its own address; the server publishes it as its document
route, ``{base}v1/knowledge-bases/{kb}/documents/{doc_id}/content#accounts``, with
``?expires=…&signature=…`` (HMAC-SHA256 with the server's link secret) when keys guard
the route.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import quote

__all__ = [
    "LINK_SECRET_ENV",
    "LINK_TTL_ENV",
    "LinkRewriter",
    "LinkSigner",
    "is_relative",
    "rewrite_links",
]

LINK_SECRET_ENV = "CITEWISE_LINK_SECRET"
LINK_TTL_ENV = "CITEWISE_LINK_TTL"
DEFAULT_TTL = 7 * 24 * 3600  # a week: chat histories are reread, but not forever
# A scheme (``https:``, ``mailto:``) means the URL is published already.
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
# A link target longer than this is not held back waiting for its ``)``.
_MAX_TARGET = 2048


def is_relative(url: str) -> bool:
    """True for a stored URL of an uploaded file: no scheme, not a page-local or root path."""
    return bool(url) and not _SCHEME.match(url) and not url.startswith(("#", "/"))


@dataclass(frozen=True)
class LinkSigner:
    """Signs document links: ``expires`` (Unix seconds) and an HMAC of kb, document and
    expiry, so a link opens one document of one knowledge base until it expires.

    ``secret`` comes from ``CITEWISE_LINK_SECRET`` (set it on every replica, so links
    signed by one open on all and survive restarts); without it each process makes its own.
    """

    secret: bytes
    ttl: int = DEFAULT_TTL

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> LinkSigner:
        secret = environ.get(LINK_SECRET_ENV, "").encode() or secrets.token_bytes(32)
        ttl = environ.get(LINK_TTL_ENV, "").strip()
        return cls(secret, int(ttl) if ttl.isdigit() and int(ttl) > 0 else DEFAULT_TTL)

    def signature(self, kb: str, doc_id: str, expires: int) -> str:
        message = f"{kb}\n{doc_id}\n{expires}".encode()
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()

    def query(self, kb: str, doc_id: str, now: float | None = None) -> str:
        """The ``expires=…&signature=…`` query string of a link made ``now``."""
        # Rounded up to the hour: every link of one answer (and of answers made within the
        # same hour) is the same URL.
        expires = (int(now if now is not None else time.time()) + self.ttl) // 3600 * 3600
        expires += 3600
        return f"expires={expires}&signature={self.signature(kb, doc_id, expires)}"

    def valid(self, kb: str, doc_id: str, expires: str | None, signature: str | None) -> bool:
        """True when ``signature`` signs this document until ``expires``, not yet passed."""
        if not expires or not signature or not expires.isdigit():
            return False
        if int(expires) < time.time():
            return False
        expected = self.signature(kb, doc_id, int(expires))
        return hmac.compare_digest(expected.encode(), signature.encode())


def document_url(base_url: str, kb: str, doc_id: str, fragment: str, query: str = "") -> str:
    """The absolute URL of a document's content route (``base_url`` ends with ``/``)."""
    path = f"v1/knowledge-bases/{quote(kb, safe='')}/documents/{quote(doc_id)}/content"
    return f"{base_url}{path}{f'?{query}' if query else ''}{f'#{fragment}' if fragment else ''}"


Publish = Callable[[str], str | None]
"""A stored URL → its published URL (None: leave it as it is)."""


def rewrite_links(text: str, publish: Publish) -> tuple[str, Callable[[int], int]]:
    """``text`` with each Markdown link target ``](url)`` that ``publish`` knows replaced,
    and the map from an offset of ``text`` to the same place in the result (for the
    citations' spans)."""
    pieces: list[str] = []
    shifts: list[tuple[int, int]] = []  # (end of a replaced target in text, length change)
    position = 0
    for match in re.finditer(r"\]\(([^()\s]+)\)", text):
        published = publish(match.group(1))
        if published is None:
            continue
        start, end = match.span(1)
        pieces += [text[position:start], published]
        shifts.append((end, len(published) - (end - start)))
        position = end
    pieces.append(text[position:])

    def moved(offset: int) -> int:
        return offset + sum(change for end, change in shifts if end <= offset)

    return "".join(pieces), moved


class LinkRewriter:
    """:func:`rewrite_links` over a stream of text deltas: a link target cut between deltas
    is held back until its ``)`` arrives, so what is sent equals the rewritten whole."""

    def __init__(self, publish: Publish) -> None:
        self.publish = publish
        self._held = ""

    def feed(self, text: str) -> str:
        data = self._held + text
        cut = _unfinished_link(data)
        self._held = data[cut:]
        return rewrite_links(data[:cut], self.publish)[0]

    def flush(self) -> str:
        held, self._held = self._held, ""
        return rewrite_links(held, self.publish)[0]


def _unfinished_link(text: str) -> int:
    """Where a link target that may still be completed starts (``len(text)``: none)."""
    if text.endswith("]"):
        return len(text) - 1
    opened = text.rfind("](")
    if opened < 0 or len(text) - opened > _MAX_TARGET:
        return len(text)
    target = text[opened + 2 :]
    if ")" in target or any(space in target for space in " \n\t"):
        return len(text)
    return opened
