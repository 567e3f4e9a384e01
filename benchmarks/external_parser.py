"""An external parser for ``benchmarks.parsers``: Microsoft's markitdown (PyPI, in ``dev``)
converts a raw file to Markdown, split here into pre-parsed sections (heading, level,
content), the form ``doc add --parsed`` takes from any other parser.

This is the LangRAG comparison's "sibling parser plugin" role played by a parser that is
on PyPI: its output enters citewise exactly as GeneralParsers' sections do.
"""

from __future__ import annotations

import io
import re
from typing import Any

from citewise.errors import MissingExtraError

__all__ = ["EXTERNAL", "markdown_sections", "markitdown_document"]

EXTERNAL = "markitdown"
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")


def markdown_sections(markdown: str) -> list[dict[str, Any]]:
    """Markdown split at its ATX headings (not inside fenced code): one section each, the
    text before the first heading a level-1 section without a heading."""
    sections: list[dict[str, Any]] = []
    heading, level, lines = "", 1, list[str]()
    fenced = False
    for line in markdown.splitlines():
        if _FENCE_RE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING_RE.match(line)
        if match:
            if heading or "".join(lines).strip():
                sections.append({"heading": heading, "level": level,
                                 "content": "\n".join(lines).strip()})  # fmt: skip
            heading, level, lines = match.group(2), len(match.group(1)), []
        else:
            lines.append(line)
    if heading or "".join(lines).strip():
        sections.append({"heading": heading, "level": level, "content": "\n".join(lines).strip()})
    return sections


def markitdown_document(doc_id: str, data: bytes, extension: str) -> dict[str, Any]:
    """One pre-parsed document from markitdown's conversion of ``data`` (a ``.html``,
    ``.pdf``, ``.docx``… file)."""
    try:
        from markitdown import MarkItDown
    except ImportError:
        raise MissingExtraError("markitdown", "dev", "the external parser comparison") from None
    result = MarkItDown(enable_plugins=False).convert_stream(
        io.BytesIO(data), file_extension=extension
    )
    markdown = result.markdown or ""
    return {
        "id": doc_id,
        "title": result.title or "",
        "text": markdown,
        "sections": markdown_sections(markdown),
    }
