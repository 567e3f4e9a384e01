"""What a crawl remembers of each URL for the next one (validators, hash, links), on disk."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["PageState", "load_state", "save_state"]

_VERSION = 1


@dataclass(frozen=True)
class PageState:
    """One URL as last fetched: its validators (``ETag``, ``Last-Modified``), the SHA-256 of
    its decoded body, and what a 304 must stand in for: a page's in-scope links, a sitemap's
    locations, robots.txt's text. ``doc_id`` is empty for anything that is not a page."""

    doc_id: str = ""
    etag: str = ""
    last_modified: str = ""
    sha256: str = ""
    links: tuple[str, ...] = ()
    text: str = ""
    is_index: bool = False  # a sitemap index (its links are sitemaps)

    def conditional_headers(self) -> dict[str, str]:
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


def load_state(path: Path) -> dict[str, PageState]:
    """The state saved at ``path``; empty when there is none or it cannot be read (the next
    crawl then fetches everything unconditionally: the state only saves work)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        return {}
    found: dict[str, PageState] = {}
    for url, entry in (data.get("urls") or {}).items():
        try:
            found[url] = PageState(**{**entry, "links": tuple(entry.get("links", ()))})
        except TypeError:
            continue
    return found


def save_state(path: Path, states: Mapping[str, PageState]) -> None:
    """Write ``states`` to ``path`` atomically (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"version": _VERSION, "urls": {url: _compact(s) for url, s in sorted(states.items())}}
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(payload, out, ensure_ascii=False, separators=(",", ":"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _compact(state: PageState) -> dict[str, object]:
    return {k: v for k, v in asdict(state).items() if v}  # the defaults are all falsy
