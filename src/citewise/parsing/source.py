"""Parses one source file into sections with the parser its suffix names, within the size limits."""

from __future__ import annotations

from citewise.errors import SourceError
from citewise.limits import check_file_size, check_section_count, check_text_size
from citewise.models import Section
from citewise.parsing.base import binary_parser, parser_for, site_parser
from citewise.parsing.layout import SiteLayout
from citewise.sources import SourceFile

__all__ = ["parse_file"]


def parse_file(
    source: SourceFile,
    *,
    site_url: str = "",
    version: str | None = None,
    scope: str = "",
    layout: SiteLayout | None = None,
) -> list[Section]:
    """The file's sections; files and parsed text over the size limits are refused, unchunked.

    ``layout`` (the site's page URL form and dialect) goes to the parsers that take one."""
    parser = parser_for(source.path)
    if parser is None:
        raise SourceError(f"{source.path}: no parser for this kind of file")
    check_file_size(source.path, len(source.data))
    doc_id = source.doc_id
    binary = binary_parser(parser)
    if binary is not None:
        sections = binary.parse_bytes(
            source.data, doc_id=doc_id, site_url=site_url, version=version, scope=scope
        )
    elif (with_layout := site_parser(parser)) is not None and layout is not None:
        sections = with_layout.parse(
            source.text, doc_id=doc_id, site_url=site_url, version=version, scope=scope,
            layout=layout,
        )  # fmt: skip
    else:
        sections = parser.parse(
            source.text, doc_id=doc_id, site_url=site_url, version=version, scope=scope
        )
    check_section_count(source.path, len(sections))
    check_text_size(source.path, (section.text for section in sections))
    return sections
