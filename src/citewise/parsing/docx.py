"""Split a Word document (DOCX) into sections at its headings: paragraphs, lists and tables."""

from __future__ import annotations

import io
import re
import zipfile
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from citewise.config import Limits
from citewise.errors import MissingExtraError, SourceError
from citewise.limits import check_table_shape, check_zip_members
from citewise.models import Section
from citewise.parsing.common import (
    BytesOnlyParser,
    Heading,
    Part,
    assemble_sections,
    image_text,
    markdown_table,
)
from citewise.parsing.doc_metadata import docx_metadata, with_metadata
from citewise.parsing.vision import MAX_IMAGES, VisionModel, describe, vision_model

if TYPE_CHECKING:
    from docx.oxml.xmlchemy import BaseOxmlElement
    from docx.styles.style import ParagraphStyle
    from docx.table import Table
    from docx.text.paragraph import Paragraph

__all__ = ["DocxParser", "parse_docx"]

_HEADING_STYLE_RE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_LIST_STYLE_RE = re.compile(r"^list\b.*?(\d*)$", re.IGNORECASE)
# A style chain longer than this is a loop in a malformed file.
_MAX_STYLE_DEPTH = 32


class DocxParser(BytesOnlyParser):
    """Word documents (``.docx``), read from their bytes with ``python-docx``."""

    format_name = "DOCX"
    takes_limits = True

    def parse_bytes(
        self,
        data: bytes,
        *,
        doc_id: str,
        site_url: str,
        version: str | None,
        scope: str = "",
        limits: Limits | None = None,
    ) -> list[Section]:
        budget = _VISION_BUDGET.set([MAX_IMAGES])
        try:
            sections = parse_docx(
                data, doc_id=doc_id, site_url=site_url, version=version, scope=scope,
                limits=limits,
            )  # fmt: skip
        finally:
            _VISION_BUDGET.reset(budget)
        return with_metadata(sections, docx_metadata(data))


def parse_docx(
    data: bytes,
    *,
    doc_id: str,
    site_url: str,
    version: str | None,
    scope: str = "",
    limits: Limits | None = None,
) -> list[Section]:
    """Split the DOCX ``data`` into sections at its ``Title`` and ``Heading 1``-``6`` paragraphs.

    Body content stays in document order: paragraphs (external hyperlinks as Markdown links),
    list paragraphs as ``- `` items indented by list level, tables as Markdown tables of
    whole rows, and pictures as their alt text (``[Image: …]``; captions are paragraphs).
    Anchors are ``slugify`` slugs of the headings; the document's first ``Title``
    or ``Heading 1`` is the page title, at the bare file URL.

    Raises:
        SourceError: the file is not a readable DOCX.
        TooLargeError: its zip members expand past the unpacked-size or ratio limit, or a
            table is over the table limits (of ``limits``; default: :class:`Limits`'
            defaults).
    """
    limits = limits or Limits()
    try:
        import docx
        from docx.table import Table
    except ImportError:
        raise MissingExtraError("python-docx", "formats", "DOCX parsing") from None

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [(i.filename, i.compress_size, i.file_size) for i in archive.infolist()]
    except zipfile.BadZipFile:
        raise SourceError(f"{doc_id}: not a DOCX file (not a zip archive)") from None
    check_zip_members(limits, doc_id, members)
    try:
        document = docx.Document(io.BytesIO(data))
        parts: list[Part] = [Part(None)]
        items: list[str] = []  # the list being built: its items stay one block
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                text = _table(block, doc_id, limits)
                is_item = False
            else:
                heading = _heading(block)
                if heading is not None:
                    _close_list(parts, items)
                    parts.append(Part(heading))
                    continue
                depth = _list_depth(block)
                text = _paragraph_text(block)
                is_item = depth is not None and bool(text)
                if is_item:
                    items.append(f"{'  ' * (depth or 0)}- {text}")
            if not is_item:
                _close_list(parts, items)
                if text:
                    parts[-1].blocks.append(text)
        _close_list(parts, items)
        fallback = " ".join((document.core_properties.title or "").split())
    except (SourceError, MemoryError, RecursionError):
        raise  # a refusal, or out of the parse's budget: not a broken file
    except Exception as error:  # python-docx and lxml raise many kinds of error on bad files
        raise SourceError(f"{doc_id}: not a readable DOCX file ({error})") from error
    return assemble_sections(
        parts,
        doc_id=doc_id,
        site_url=site_url,
        version=version,
        scope=scope,
        fallback_title=fallback or None,
    )


def _close_list(parts: list[Part], items: list[str]) -> None:
    if items:
        parts[-1].blocks.append("\n".join(items))
        items.clear()


def _style_names(paragraph: Paragraph) -> list[str]:
    """The paragraph's style name and those it is based on, nearest first."""
    names: list[str] = []
    style: ParagraphStyle | None = paragraph.style
    while style is not None and len(names) < _MAX_STYLE_DEPTH:
        name = style.name
        if isinstance(name, str):
            names.append(name)
        style = style.base_style
    return names


def _heading(paragraph: Paragraph) -> Heading | None:
    title = " ".join(paragraph.text.split())
    if not title:
        return None
    for name in _style_names(paragraph):
        if name.lower() == "title":
            return Heading(0, title)
        match = _HEADING_STYLE_RE.match(name)
        if match:
            level = int(match.group(1))
            # Sections stop at Heading 6, as they do at h6 in HTML and Markdown.
            return Heading(level, title) if level <= 6 else None
    return None


def _list_depth(paragraph: Paragraph) -> int | None:
    """The list level (0 = top) of a list paragraph, or None for an ordinary one."""
    levels = paragraph._p.xpath("./w:pPr/w:numPr/w:ilvl/@w:val")
    if levels:
        value = str(levels[0])
        return int(value) if value.isdigit() else 0
    if paragraph._p.xpath("./w:pPr/w:numPr"):
        return 0
    for name in _style_names(paragraph):
        match = _LIST_STYLE_RE.match(name)
        if match:
            # "List Bullet 2" is the second level.
            return max(int(match.group(1)) - 1, 0) if match.group(1) else 0
    return None


def _paragraph_text(paragraph: Paragraph) -> str:
    from docx.text.hyperlink import Hyperlink

    pieces: list[str] = []
    for item in paragraph.iter_inner_content():
        if isinstance(item, Hyperlink):
            label = " ".join(item.text.split())
            url = item.url
            pieces.append(f"[{label}]({url})" if label and item.address else item.text)
        else:
            pieces.append(item.text)
            pieces.extend(_pictures(item._element, paragraph.part))
    lines = ("".join(pieces)).split("\n")
    return "\n".join(" ".join(line.split()) for line in lines if line.strip())


def _pictures(element: BaseOxmlElement, part: Any = None) -> list[str]:
    """The pictures in a run as text: their description (Word's alt text, ``descr``) or
    title, and with a vision model configured (``parsing.vision``) what the model says the
    image shows; what a figure shows becomes part of the section."""
    found = []
    budget = _VISION_BUDGET.get()
    vision = vision_model() if part is not None and budget is not None else None
    for properties in element.xpath(".//wp:docPr"):
        described = properties.get("descr") or properties.get("title") or ""
        if vision is not None and budget is not None and budget[0] > 0:
            budget[0] -= 1
            seen = _seen_by_model(properties, part, vision)
            described = f"{described}. {seen}" if described and seen else described or seen
        found.append(image_text(described))
    return found


# How many more pictures of the document being parsed the vision model may describe.
_VISION_BUDGET: ContextVar[list[int] | None] = ContextVar("vision_budget", default=None)


def _seen_by_model(properties: BaseOxmlElement, part: Any, vision: VisionModel) -> str:
    """The vision model's description of the image a ``wp:docPr`` belongs to ("" if none)."""
    holder = properties.getparent()
    embeds = holder.xpath(".//a:blip/@r:embed") if holder is not None else []
    if not embeds:
        return ""
    image = part.related_parts.get(str(embeds[0]))
    if image is None:
        return ""
    return describe(image.blob, getattr(image, "content_type", "image/png"), vision)


def _table(table: Table, doc_id: str, limits: Limits) -> str:
    check_table_shape(limits, doc_id, len(table.columns), len(table.columns) * len(table.rows))
    rows = [[cell.text for cell in row.cells] for row in table.rows]
    return markdown_table(rows)
