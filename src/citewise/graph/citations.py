"""Turns links in an answer that point at retrieved sections into url_citation annotations."""

from __future__ import annotations

import re
from collections.abc import Mapping

from citewise.models import Citation

# A Markdown link [text](url "title"), or a bare http(s) URL. Link text may hold brackets
# one level deep (e.g. "[`x[0]`](...)"), which answers about code often do.
_MARKDOWN_LINK = re.compile(
    r"\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?(?P<url>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
_BARE_URL = re.compile(r"https?://[^\s<>()\[\]\"'`]+")


def find_citations(text: str, section_titles: Mapping[str, str]) -> list[Citation]:
    """Citations for every link in ``text`` whose URL exactly matches a retrieved section URL.

    ``section_titles`` maps each retrieved section URL to its title. A Markdown link's span
    covers the whole link as written; a bare URL's span covers the URL. The indices are
    computed here from the final text, never taken from a model. Other links are left alone.
    """
    citations: list[Citation] = []
    taken: list[tuple[int, int]] = []
    for match in _MARKDOWN_LINK.finditer(text):
        url = match.group("url")
        taken.append(match.span())
        if url in section_titles:
            citations.append(Citation(url, section_titles[url], match.start(), match.end()))
    for match in _BARE_URL.finditer(text):
        start, end = match.span()
        if any(s <= start < e for s, e in taken):
            continue
        url = match.group(0).rstrip(".,;:!?")
        end = start + len(url)
        if url in section_titles:
            citations.append(Citation(url, section_titles[url], start, end))
    citations.sort(key=lambda c: c.start_index)
    return citations
