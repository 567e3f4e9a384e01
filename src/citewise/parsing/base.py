"""The parser protocols and the registry that picks a parser by file suffix."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import PurePath
from typing import Protocol, runtime_checkable

from citewise.models import Section
from citewise.parsing.layout import SiteLayout
from citewise.parsing.markdown import parse_markdown
from citewise.registry import Registry

__all__ = [
    "PARSERS",
    "BinaryParser",
    "MarkdownParser",
    "Parser",
    "SiteParser",
    "binary_parser",
    "binary_suffixes",
    "parser_for",
    "register_parser",
    "site_parser",
    "supported_suffixes",
    "takes_limits",
]


@runtime_checkable
class Parser(Protocol):
    """Turns one document's text into sections that know their published URLs."""

    def parse(
        self, text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]: ...


def takes_limits(parser: Parser) -> bool:
    """Whether ``parser`` checks size limits as it parses (``takes_limits`` true): its
    ``parse`` (or ``parse_bytes``) then also takes the ingest's limits as ``limits``
    (a :class:`citewise.config.Limits`). Every parser's output is held to the section and
    text limits after it returns, whether it takes them or not."""
    return bool(getattr(parser, "takes_limits", False))


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


@runtime_checkable
class SiteParser(Parser, Protocol):
    """A parser of a site generator's sources (Markdown, reStructuredText): ``site_layout``
    is true and :meth:`parse` also takes the site's :class:`SiteLayout`, which decides the
    page URLs (``a/b/`` or ``a/b.html``) and the dialect (MkDocs Markdown or MyST).

    Other parsers (HTML, PDF…) are called without it (see :func:`site_parser`).
    """

    site_layout: bool

    def parse(
        self,
        text: str,
        *,
        doc_id: str,
        site_url: str,
        version: str | None,
        scope: str = "",
        layout: SiteLayout | None = None,
    ) -> list[Section]: ...


def site_parser(parser: Parser) -> SiteParser | None:
    """``parser`` when it takes a site layout (``site_layout`` true), else None."""
    if getattr(parser, "site_layout", False) and isinstance(parser, SiteParser):
        return parser
    return None


class MarkdownParser:
    """Markdown as its site publishes it: MkDocs/Zensical (see :func:`parse_markdown`), or
    MyST in a Sphinx site (see :func:`citewise.parsing.myst.parse_myst`)."""

    site_layout = True

    def parse(
        self,
        text: str,
        *,
        doc_id: str,
        site_url: str,
        version: str | None,
        scope: str = "",
        layout: SiteLayout | None = None,
    ) -> list[Section]:
        if layout is not None and layout.generator == "sphinx":
            from citewise.parsing.myst import parse_myst

            return parse_myst(
                text, doc_id=doc_id, site_url=site_url, version=version, scope=scope,
                layout=layout,
            )  # fmt: skip
        return parse_markdown(
            text, doc_id=doc_id, site_url=site_url, version=version, scope=scope, layout=layout
        )


# Suffix → the parser class for it (made once, on first use).
PARSERS: Registry[Callable[[], Parser]] = Registry(
    "parser",
    {
        ".md": "citewise.parsing.base:MarkdownParser",
        ".rst": "citewise.parsing.rst:RstParser",
        ".markdown": "citewise.parsing.base:MarkdownParser",
        ".html": "citewise.parsing.html:HTMLParser",
        ".htm": "citewise.parsing.html:HTMLParser",
        ".pdf": "citewise.parsing.pdf:PdfParser",
        ".docx": "citewise.parsing.docx:DocxParser",
        ".txt": "citewise.parsing.text:TextParser",
        ".csv": "citewise.parsing.text:CsvParser",
        ".tsv": "citewise.parsing.text:CsvParser",
    },
)
_INSTANCES: dict[str, Parser] = {}


def _normalise(suffix: str) -> str:
    suffix = suffix.lower()
    return suffix if suffix.startswith(".") else f".{suffix}"


def register_parser(suffixes: str | Iterable[str], parser: Parser | str) -> None:
    """Use ``parser`` (or the ``"module:Class"`` it names) for files ending in any of
    ``suffixes`` (``".md"`` or ``"md"``)."""
    for suffix in [suffixes] if isinstance(suffixes, str) else suffixes:
        key = _normalise(suffix)
        _INSTANCES.pop(key, None)
        if isinstance(parser, str):
            PARSERS.register(key, parser)
        else:
            PARSERS.register(key, _given(parser))


def _given(parser: Parser) -> Callable[[], Parser]:
    return lambda: parser


def parser_for(path: str | PurePath) -> Parser | None:
    """The parser registered for ``path``'s suffix (case-insensitive), or None."""
    suffix = PurePath(path).suffix
    return _parser(_normalise(suffix)) if suffix else None


def _parser(key: str) -> Parser | None:
    if key not in _INSTANCES:
        if key not in PARSERS.names():
            return None
        _INSTANCES[key] = PARSERS.get(key)()
    return _INSTANCES[key]


def supported_suffixes() -> frozenset[str]:
    """Every suffix with a registered parser, lowercase with its dot (``".md"``)."""
    return frozenset(PARSERS.names())


def binary_suffixes() -> frozenset[str]:
    """The suffixes whose parser reads bytes rather than text (``".pdf"``, ``".docx"``)."""
    return frozenset(
        suffix
        for suffix in supported_suffixes()
        if (parser := _parser(suffix)) is not None and binary_parser(parser) is not None
    )
