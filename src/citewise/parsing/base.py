"""The parser protocols and the registry that picks a parser by file suffix."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath
from typing import Protocol, runtime_checkable

from citewise.models import Section
from citewise.parsing.docx import DocxParser
from citewise.parsing.html import HTMLParser
from citewise.parsing.markdown import parse_markdown
from citewise.parsing.pdf import PdfParser
from citewise.parsing.text import CsvParser, TextParser

__all__ = [
    "BinaryParser",
    "CsvParser",
    "DocxParser",
    "HTMLParser",
    "MarkdownParser",
    "Parser",
    "PdfParser",
    "TextParser",
    "binary_parser",
    "binary_suffixes",
    "parser_for",
    "register_parser",
    "supported_suffixes",
]


@runtime_checkable
class Parser(Protocol):
    """Turns one document's text into sections that know their published URLs."""

    def parse(
        self, text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]: ...


@runtime_checkable
class BinaryParser(Parser, Protocol):
    """A parser for a binary format (PDF, DOCX): ``binary`` is true and it reads bytes.

    Sources keep such files as bytes, and callers use :meth:`parse_bytes` (see
    :func:`binary_parser`); its ``parse`` of text may refuse.
    """

    binary: bool

    def parse_bytes(
        self, data: bytes, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]: ...


def binary_parser(parser: Parser) -> BinaryParser | None:
    """``parser`` when it reads bytes (``binary`` true, with ``parse_bytes``), else None."""
    if getattr(parser, "binary", False) and isinstance(parser, BinaryParser):
        return parser
    return None


class MarkdownParser:
    """Markdown as MkDocs/Zensical publish it (see :func:`parse_markdown`)."""

    def parse(
        self, text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]:
        return parse_markdown(text, doc_id=doc_id, site_url=site_url, version=version, scope=scope)


_PARSERS: dict[str, Parser] = {}


def _normalise(suffix: str) -> str:
    suffix = suffix.lower()
    return suffix if suffix.startswith(".") else f".{suffix}"


def register_parser(suffixes: str | Iterable[str], parser: Parser) -> None:
    """Use ``parser`` for files ending in any of ``suffixes`` (``".md"`` or ``"md"``)."""
    for suffix in [suffixes] if isinstance(suffixes, str) else suffixes:
        _PARSERS[_normalise(suffix)] = parser


def parser_for(path: str | PurePath) -> Parser | None:
    """The parser registered for ``path``'s suffix (case-insensitive), or None."""
    suffix = PurePath(path).suffix
    return _PARSERS.get(_normalise(suffix)) if suffix else None


def supported_suffixes() -> frozenset[str]:
    """Every suffix with a registered parser, lowercase with its dot (``".md"``)."""
    return frozenset(_PARSERS)


def binary_suffixes() -> frozenset[str]:
    """The suffixes whose parser reads bytes rather than text (``".pdf"``, ``".docx"``)."""
    return frozenset(suffix for suffix, p in _PARSERS.items() if binary_parser(p) is not None)


register_parser((".md", ".markdown"), MarkdownParser())
register_parser((".html", ".htm"), HTMLParser())
register_parser(".pdf", PdfParser())
register_parser(".docx", DocxParser())
register_parser(".txt", TextParser())
register_parser((".csv", ".tsv"), CsvParser())
