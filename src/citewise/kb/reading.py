"""Reading a knowledge base back: a document's text, one section whole, example headings.

The store keeps chunks, not files: a document's text is rebuilt from its chunks in order,
each chunk's heading-path prefix dropped and each section's heading written once.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Sequence

from citewise.chunking import without_overlap
from citewise.models import Chunk, Document, SearchFilter
from citewise.store import KBStore

__all__ = ["document_chunks", "example_headings", "html_of", "section_chunks", "text_of"]

# ``neighbours`` takes a count either side; this is more chunks than any document holds.
_WHOLE_DOCUMENT = 1_000_000
# Headings that name a page's place, not a subject worth asking about.
_GENERIC = frozenset({"home", "index", "introduction", "overview", "readme", "contents"})


def document_chunks(store: KBStore, doc_id: str, title: str = "") -> list[Chunk]:
    """Every chunk of ``doc_id`` in document order (``[]``: no such document).

    One keyword match inside the document finds a chunk, and its neighbours are the rest;
    only a document no word of whose title or id matches is found by reading every chunk.
    """
    words = " ".join([title, doc_id.replace("/", " ").replace(".", " ").replace("-", " ")])
    found = store.keyword(words, 1, SearchFilter(doc_ids=(doc_id,)))
    if found:
        return store.neighbours(found[0][0].chunk_id, _WHOLE_DOCUMENT)
    chunks = [chunk for chunk in store.get(sorted(store.chunk_ids())) if chunk.doc_id == doc_id]
    return sorted(chunks, key=lambda chunk: chunk.position)


def section_chunks(store: KBStore, documents: Sequence[Document], url: str) -> list[Chunk]:
    """The chunks of the section at ``url`` (a page URL: its whole page), in order."""
    page_url = url.split("#", 1)[0]
    for document in documents:
        if document.url.split("#", 1)[0] != page_url:
            continue
        chunks = document_chunks(store, document.doc_id, document.title)
        return chunks if "#" not in url else [c for c in chunks if c.url == url]
    return []


def _body(chunk: Chunk) -> str:
    """A chunk's text without the heading-path prefix the chunker put before it."""
    head, separator, body = chunk.text.partition("\n\n")
    path = chunk.heading_path[-1] if chunk.heading_path else chunk.title
    if separator and path and path in head and "\n" not in head:
        return body
    return "" if not separator and path and path in head else chunk.text


def _pieces(chunks: Sequence[Chunk]) -> Iterator[tuple[Chunk, str | None, str]]:
    """Per chunk in order: the chunk, its section's heading when the section starts here
    (else None), and its text without the heading-path prefix (and without the start it
    repeats of the chunk before, in a knowledge base with chunk overlap)."""
    section: tuple[int, str] | None = None
    previous = ""
    for chunk in chunks:
        heading = None
        body = _body(chunk).strip("\n")
        if (chunk.section_index, chunk.url) != section:
            section = (chunk.section_index, chunk.url)
            heading = chunk.heading_path[-1] if chunk.heading_path else chunk.title
            previous = ""
        yield chunk, heading, without_overlap(previous, body) if previous else body
        previous = body


def _level(chunk: Chunk) -> int:
    return min(max(len(chunk.heading_path), 1), 6)


def text_of(chunks: Sequence[Chunk]) -> str:
    """Markdown of ``chunks`` in order: each section's heading once, then its text."""
    parts: list[str] = []
    for chunk, heading, body in _pieces(chunks):
        if heading:
            parts.append(f"{'#' * _level(chunk)} {heading}")
        if body:
            parts.append(body)
    return "\n\n".join(parts) + "\n" if parts else ""


def html_of(chunks: Sequence[Chunk], title: str) -> str:
    """A standalone HTML page of ``chunks``: each section's heading carries the anchor its
    citations use, so a citation of a knowledge base with no published site still lands on
    its section. Markdown is rendered without raw HTML (the docs are data, not markup)."""
    from markdown_it import MarkdownIt

    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
    parts: list[str] = []
    for chunk, heading, body in _pieces(chunks):
        if heading is not None:
            level, anchor = (
                _level(chunk),
                f' id="{html.escape(chunk.anchor)}"' if chunk.anchor else "",
            )
            parts.append(f"<h{level}{anchor}>{html.escape(heading)}</h{level}>")
        if body:
            parts.append(markdown.render(body))
    return _PAGE.format(title=html.escape(title), body="\n".join(parts))


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font: 16px/1.6 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto;
  padding: 0 1rem; color-scheme: light dark; }}
pre {{ overflow-x: auto; padding: .75rem; background: color-mix(in srgb, currentColor 8%,
  transparent); border-radius: 6px; }}
code {{ font-family: ui-monospace, monospace; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #8884; padding: .25rem .5rem; }}
:target {{ scroll-margin-top: 1rem; background: color-mix(in srgb, Highlight 20%, transparent); }}
</style></head>
<body>
{body}
</body></html>
"""


def example_headings(documents: Sequence[Document], count: int) -> list[str]:
    """Up to ``count`` page titles worth asking about, spread across the documents."""
    titles: list[str] = []
    for document in documents:
        title = " ".join(document.title.split())
        if title and title.lower() not in _GENERIC and title not in titles:
            titles.append(title)
    if len(titles) <= count:
        return titles
    step = len(titles) / count
    return [titles[int(index * step)] for index in range(count)]
