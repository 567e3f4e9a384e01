"""Parses one source file into sections with the parser its suffix names, within the size
limits, and the costly formats in a worker process within a time and memory budget."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from citewise.config import Limits, ParseSettings
from citewise.documents import SourceFile
from citewise.errors import SourceError
from citewise.limits import check_file_size, check_section_count, check_text_size
from citewise.models import Section
from citewise.parsing.base import Parser, binary_parser, parser_for, site_parser, takes_limits
from citewise.parsing.layout import SiteLayout

__all__ = ["ISOLATED_SUFFIXES", "parse_file", "parse_in_process", "parsed_in_worker"]

# Formats parsed in a worker by default: those whose parsers do work out of proportion to
# the file's size (zip members, PDF content streams, tables, markup trees). Markdown,
# reStructuredText and plain text are parsed in process (linear, already size-limited).
ISOLATED_SUFFIXES = frozenset({".pdf", ".docx", ".html", ".htm", ".csv", ".tsv"})


def parse_file(
    source: SourceFile,
    *,
    site_url: str = "",
    version: str | None = None,
    scope: str = "",
    layout: SiteLayout | None = None,
    settings: ParseSettings | None = None,
) -> list[Section]:
    """The file's sections; files and parsed text over the size limits are refused, unchunked.

    ``layout`` (the site's page URL form and dialect) goes to the parsers that take one.
    ``settings`` (default: read from ``CITEWISE_PARSE_*`` and ``CITEWISE_MAX_*`` now) give
    the size limits and, for the formats of :data:`ISOLATED_SUFFIXES`, the worker process
    and its time and memory budget, see :func:`parsed_in_worker`."""
    settings = settings or ParseSettings.from_env()
    limits = settings.limits
    parser = parser_for(source.path)
    if parser is None:
        raise SourceError(f"{source.path}: no parser for this kind of file")
    check_file_size(limits, source.path, len(source.data))
    if parsed_in_worker(source.path, settings):
        from citewise.parsing.worker import parse_isolated

        # The worker is given these settings (its limits included) with the file.
        sections = parse_isolated(
            source, parse=parse_in_process, site_url=site_url, version=version, scope=scope,
            layout=layout, settings=settings,
        )  # fmt: skip
        # Checked here too: a parse sent by name may be one that checks nothing.
        _check_parsed(limits, source, sections)
        return sections
    return parse_in_process(
        source, site_url=site_url, version=version, scope=scope, layout=layout, limits=limits
    )


def parsed_in_worker(path: str | PurePath, settings: ParseSettings | None = None) -> bool:
    """Whether a file at ``path`` is parsed in a worker process: the settings' isolation
    (``CITEWISE_PARSE_ISOLATION``) is ``heavy`` (default: :data:`ISOLATED_SUFFIXES`), ``all``
    or ``off`` (in process, no budget). Only citewise's own parsers run in a worker; one
    registered at run time is called in process, where it was registered."""
    mode = (settings or ParseSettings.from_env()).isolation
    parser = parser_for(path)
    if mode == "off" or parser is None or not _built_in(parser):
        return False
    return mode == "all" or PurePath(path).suffix.lower() in ISOLATED_SUFFIXES


def _built_in(parser: Parser) -> bool:
    return type(parser).__module__.startswith("citewise.parsing.")


def parse_in_process(
    source: SourceFile,
    *,
    site_url: str = "",
    version: str | None = None,
    scope: str = "",
    layout: SiteLayout | None = None,
    limits: Limits,
) -> list[Section]:
    """:func:`parse_file` in this process, with no time or memory budget, within ``limits``;
    a parser that declares ``takes_limits`` is given them (see
    :func:`~citewise.parsing.base.takes_limits`)."""
    parser = parser_for(source.path)
    if parser is None:
        raise SourceError(f"{source.path}: no parser for this kind of file")
    check_file_size(limits, source.path, len(source.data))
    doc_id = source.doc_id
    extra: dict[str, Any] = {"limits": limits} if takes_limits(parser) else {}
    binary = binary_parser(parser)
    if binary is not None:
        sections = binary.parse_bytes(
            source.data, doc_id=doc_id, site_url=site_url, version=version, scope=scope, **extra
        )
    elif (with_layout := site_parser(parser)) is not None and layout is not None:
        sections = with_layout.parse(
            source.text, doc_id=doc_id, site_url=site_url, version=version, scope=scope,
            layout=layout, **extra,
        )  # fmt: skip
    else:
        sections = parser.parse(
            source.text, doc_id=doc_id, site_url=site_url, version=version, scope=scope, **extra
        )
    _check_parsed(limits, source, sections)
    return sections


def _check_parsed(limits: Limits, source: SourceFile, sections: list[Section]) -> None:
    check_section_count(limits, source.path, len(sections))
    check_text_size(limits, source.path, (section.text for section in sections))
