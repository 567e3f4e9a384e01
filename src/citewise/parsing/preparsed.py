"""Content an external parser already parsed (JSON: documents, their text and sections) as sections.

The shape is the one document parsers such as LangRAG's GeneralParsers emit: per document its
metadata, its full ``text`` and its ``sections`` (heading, level, page, content). Sections are
used when given, the text otherwise; docs/knowledge-bases.md shows the JSON schema
(:data:`PARSED_SCHEMA`, what ``citewise doc add --parsed`` and the REST API accept).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citewise.config import Limits
from citewise.documents import upload_doc_id
from citewise.errors import SourceError
from citewise.limits import check_file_size, check_section_count, check_text_size
from citewise.models import Section
from citewise.parsing.common import file_page, file_url, title_from_name
from citewise.parsing.doc_metadata import preparsed_metadata, with_metadata
from citewise.parsing.slugs import UsedAnchors, slugify, unique

__all__ = [
    "PARSED_SCHEMA",
    "ParsedContent",
    "ParsedDocument",
    "ParsedSection",
    "parse_parsed",
    "parsed_sections",
]


class ParsedSection(BaseModel):
    """One section as the external parser found it; keys it adds beyond these are ignored."""

    model_config = ConfigDict(extra="ignore")

    heading: str = Field("", description="the section's heading (the document title if empty)")
    level: int = Field(1, ge=1, le=6, description="heading level, 1 (top) to 6")
    page: int | None = Field(None, ge=1, description="page number in a paged source (PDF)")
    content: str = Field("", description="the section's text (Markdown tables allowed)")


class ParsedDocument(BaseModel):
    """One document: its id (a relative file name), metadata, text and sections."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1, description="document id: a relative file name, a/b.pdf")
    title: str = Field("", description="document title (else metadata.title, else the name)")
    url: str = Field("", description="where the document is published (else its file URL)")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="free-form; title and url are read from it"
    )
    text: str = Field("", description="the whole text: used when there are no sections")
    sections: list[ParsedSection] = Field(default_factory=list)


class ParsedContent(BaseModel):
    """What an external parser hands over: one or more parsed documents."""

    model_config = ConfigDict(extra="ignore")

    documents: list[ParsedDocument] = Field(min_length=1)


PARSED_SCHEMA: dict[str, Any] = ParsedContent.model_json_schema()


def parse_parsed(
    data: bytes | str, *, name: str = "parsed content", limits: Limits | None = None
) -> list[ParsedDocument]:
    """The documents of a parsed-content JSON (``{"documents": [...]}``, a list of documents,
    or one document), within the file size limit of ``limits`` (default: :class:`Limits`'
    defaults); malformed input names what is wrong."""
    raw = data.encode() if isinstance(data, str) else data
    check_file_size(limits or Limits(), name, len(raw))
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SourceError(f"{name}: not valid JSON ({error})") from None
    if isinstance(value, list):
        value = {"documents": value}
    elif isinstance(value, dict) and "documents" not in value:
        value = {"documents": [value]}
    try:
        content = ParsedContent.model_validate(value)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'top level'}: {e['msg']}"
            for e in error.errors()[:5]
        )
        raise SourceError(f"{name}: not parsed content as documented ({problems})") from None
    documents = [d.model_copy(update={"id": upload_doc_id(d.id)}) for d in content.documents]
    ids = [document.id for document in documents]
    if len(set(ids)) != len(ids):
        raise SourceError(f"{name}: the same document id appears twice: {sorted(ids)}")
    return documents


def parsed_sections(
    document: ParsedDocument,
    *,
    site_url: str = "",
    version: str | None = None,
    scope: str = "",
    limits: Limits | None = None,
) -> list[Section]:
    """``document`` as citewise sections: heading paths follow the levels under the title,
    a PDF's sections link to their page (``#page=N``), others to their heading's anchor.

    Raises:
        SourceError: the document has neither sections nor text.
        TooLargeError: over the section count or the text size of ``limits`` (default:
            :class:`Limits`' defaults: 50,000 sections, 4 MiB).
    """
    limits = limits or Limits()
    doc_id = upload_doc_id(document.id)
    title = _clean(document.title or _text(document.metadata, "title")) or title_from_name(doc_id)
    base = document.url or _text(document.metadata, "url") or file_url(doc_id, site_url, version)
    page = file_page(doc_id)
    paged = doc_id.lower().endswith(".pdf")
    given = document.sections or (
        [ParsedSection(heading=title, level=1, page=None, content=document.text)]
        if document.text.strip()
        else []
    )
    if not given:
        raise SourceError(f"{doc_id}: the parsed document has neither sections nor text")
    check_section_count(limits, doc_id, len(given))
    check_text_size(limits, doc_id, (s.content for s in given))
    used = UsedAnchors()
    stack: list[tuple[int, str]] = []
    sections: list[Section] = []
    for index, parsed in enumerate(given):
        heading = _clean(parsed.heading) or title
        while stack and stack[-1][0] >= parsed.level:
            stack.pop()
        stack.append((parsed.level, heading))
        path = tuple(h for _, h in stack)
        if path[0] != title:
            path = (title, *path)
        if paged and parsed.page is not None:
            anchor = f"page={parsed.page}"
        elif index == 0 and heading == title:
            anchor = ""  # the page's own title: its bare URL, as the other parsers do
        else:
            anchor = unique(slugify(heading) or "section", used)
        sections.append(
            Section(
                doc_id=doc_id,
                title=heading,
                heading_path=path,
                level=parsed.level,
                anchor=anchor,
                url=f"{base}#{anchor}" if anchor else base,
                page=page,
                text=parsed.content.strip(),
                scope=scope,
                page_number=parsed.page,
            )
        )
    return with_metadata(sections, preparsed_metadata(document.metadata))


def _clean(text: str) -> str:
    return " ".join(text.split())


def _text(metadata: Mapping[str, Any], key: str) -> str:
    value = metadata.get(key)
    return value if isinstance(value, str) else ""
