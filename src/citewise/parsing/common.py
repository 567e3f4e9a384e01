"""What the non-Markdown parsers share: file URLs, Markdown tables and heading assembly."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from citewise.models import Section
from citewise.parsing.markdown import site_base
from citewise.parsing.slugs import UsedAnchors, slugify, unique

__all__ = [
    "Heading",
    "Part",
    "assemble_sections",
    "file_page",
    "file_url",
    "image_text",
    "markdown_table",
    "single_section",
    "title_from_name",
]

_INDEX_NAMES = frozenset({"index.html", "index.htm"})
_WHITESPACE_RE = re.compile(r"\s+")


@dataclass(frozen=True)
class Heading:
    """A heading as a parser finds it; ``anchor`` is its own id when the format has one.

    ``level`` is 1-6, or 0 for a document title (DOCX ``Title``) that every heading nests under.
    """

    level: int
    title: str
    anchor: str | None = None


@dataclass
class Part:
    """A heading (None: the text before the first one) and the Markdown blocks under it."""

    heading: Heading | None
    blocks: list[str] = field(default_factory=list)


def file_page(doc_id: str) -> str:
    """The page path of a file served as itself: ``a/b.pdf`` → ``a/b.pdf``.

    An ``index.html`` is served as its folder (``a/index.html`` → ``a/``), as web servers do.
    """
    path = doc_id.replace("\\", "/").lstrip("/")
    while path.startswith("./"):
        path = path[2:]
    folder, name = posixpath.split(path)
    if name.lower() in _INDEX_NAMES:
        return f"{folder}/" if folder else ""
    return path


def file_url(doc_id: str, site_url: str, version: str | None) -> str:
    """The published URL of a file served as itself (see :func:`file_page`)."""
    return site_base(site_url, version) + file_page(doc_id)


def title_from_name(doc_id: str) -> str:
    """A title from a file name: ``guides/release-notes.txt`` → ``Release notes``."""
    stem = posixpath.basename(doc_id.replace("\\", "/").rstrip("/"))
    stem = stem.rsplit(".", 1)[0] if "." in stem.lstrip(".") else stem
    title = " ".join(stem.replace("-", " ").replace("_", " ").split())
    if not title:
        return "Home"
    return title.capitalize() if title.lower() == title else title


def _cell(text: str) -> str:
    # A table row must stay one line, and a bare pipe would start a new cell.
    return _WHITESPACE_RE.sub(" ", text).strip().replace("|", "\\|")


def image_text(description: str) -> str:
    """An image as text: its description (alt text, a picture's ``descr``) as ``[Image: …]``,
    so what a figure shows is searchable; nothing for an image without one (decoration)."""
    text = _WHITESPACE_RE.sub(" ", description).strip()
    return f" [Image: {text}] " if text else ""


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    """``rows`` as a Markdown table, the first row as its header; short rows are padded.

    Cells are single-line (whitespace collapsed) with pipes escaped, so each row is one line
    and the chunker can split the table between rows with the header repeated.
    """
    cleaned = [[_cell(cell) for cell in row] for row in rows]
    cleaned = [row for row in cleaned if row]
    if not cleaned:
        return ""
    width = max(len(row) for row in cleaned)
    lines = []
    for index, row in enumerate(cleaned):
        padded = row + [""] * (width - len(row))
        lines.append("| " + " | ".join(padded) + " |")
        if index == 0:
            lines.append("|" + "|".join([" --- "] * width) + "|")
    return "\n".join(lines)


def single_section(
    text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
) -> list[Section]:
    """The whole document as one section titled after its file, at its bare page URL."""
    title = title_from_name(doc_id)
    return [
        Section(
            doc_id=doc_id,
            title=title,
            heading_path=(title,),
            level=1,
            anchor="",
            url=file_url(doc_id, site_url, version),
            page=file_page(doc_id),
            text=text,
            scope=scope,
        )
    ]


def assemble_sections(
    parts: Sequence[Part],
    *,
    doc_id: str,
    site_url: str,
    version: str | None,
    scope: str = "",
    fallback_title: str | None = None,
    slug_missing: bool = True,
    kept_anchors: Collection[str] = (),
) -> list[Section]:
    """Turn headings and their blocks into sections, with the Markdown parser's conventions.

    Own anchors are reserved first, other headings get unique ``slugify`` anchors in document
    order (with ``slug_missing`` false they get none: the bare page URL, for pages whose ids
    are all known); the first top-level heading (level 0 or 1) is the page title and its URL
    is the bare page URL, unless its anchor is in ``kept_anchors`` (an API entry heading a
    page is cited at its object's id); heading paths follow the heading levels and start
    with the page title. Text before the first heading joins that heading when it is the page
    title, and otherwise is a section of its own titled after the page (``fallback_title`` or
    the file name).
    """
    page = file_page(doc_id)
    url = site_base(site_url, version) + page
    headings = [part.heading for part in parts if part.heading is not None]
    used = UsedAnchors(h.anchor for h in headings if h.anchor)
    anchors = [
        h.anchor or (unique(slugify(h.title), used) if slug_missing else "") for h in headings
    ]
    top = next((i for i, h in enumerate(headings) if h.level <= 1), None)
    page_title = headings[top].title if top is not None else None
    page_title = page_title or fallback_title or title_from_name(doc_id)

    def section(title: str, path: tuple[str, ...], level: int, anchor: str, body: str) -> Section:
        return Section(
            doc_id=doc_id,
            title=title,
            heading_path=path,
            level=max(level, 1),
            anchor=anchor,
            url=f"{url}#{anchor}" if anchor else url,
            page=page,
            text=body,
            scope=scope,
        )

    sections: list[Section] = []
    preamble = ""
    stack: list[Heading] = []
    index = -1
    for part in parts:
        body = "\n\n".join(block for block in part.blocks if block.strip())
        if part.heading is None:
            preamble = f"{preamble}\n\n{body}" if preamble and body else preamble or body
            continue
        index += 1
        heading = part.heading
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        path = tuple(h.title for h in stack)
        if top is None or stack[0].level > 1:
            path = (page_title, *path)
        anchor = anchors[index]
        if index == top and anchor not in kept_anchors:
            anchor = ""
        if index == 0 and preamble:
            if index == top:
                body = f"{preamble}\n\n{body}" if body else preamble
            else:
                sections.append(section(page_title, (page_title,), 1, "", preamble))
        sections.append(section(heading.title, path, heading.level, anchor, body))
    if index == -1 and preamble:
        sections.append(section(page_title, (page_title,), 1, "", preamble))
    return sections


class BytesOnlyParser:
    """Base of parsers that read only bytes: ``parse`` of text refuses with a clear error."""

    binary = True
    format_name = "this"

    def parse(
        self, text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]:
        raise TypeError(
            f"{doc_id}: {self.format_name} is a binary format: pass its bytes to parse_bytes"
        )
