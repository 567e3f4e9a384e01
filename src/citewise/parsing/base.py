"""The parser protocol and the registry that picks a parser by file suffix."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath
from typing import Protocol, runtime_checkable

from citewise.models import Section
from citewise.parsing.markdown import parse_markdown

__all__ = ["MarkdownParser", "Parser", "parser_for", "register_parser", "supported_suffixes"]


@runtime_checkable
class Parser(Protocol):
    """Turns one document's text into sections that know their published URLs."""

    def parse(
        self, text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]: ...


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


register_parser((".md", ".markdown"), MarkdownParser())
