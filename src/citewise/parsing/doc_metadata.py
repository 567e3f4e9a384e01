"""What a document says about itself, beyond its title: author, subject, description,
created and modified, read from a PDF's document information, a DOCX's core properties,
an HTML page's ``<meta>`` tags or a pre-parsed document's ``metadata``.

The values travel on the document's first section (``Section.doc_metadata``) to the
ingest, which keeps them on the stored :class:`citewise.models.Document`.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any
from xml.etree import ElementTree

from citewise.models import Section
from citewise.store.doc_metadata import metadata_pairs

__all__ = [
    "docx_metadata",
    "html_metadata",
    "pdf_metadata",
    "preparsed_metadata",
    "with_metadata",
]

_CORE_XML = "docProps/core.xml"
_MAX_CORE_BYTES = 256 * 1024
_CORE_NAMES = {
    "creator": "author",
    "subject": "subject",
    "description": "description",
    "created": "created",
    "modified": "modified",
}
_HTML_NAMES = {
    "author": "author",
    "description": "description",
    "subject": "subject",
    "og:description": "description",
    "article:author": "author",
    "article:published_time": "created",
    "article:modified_time": "modified",
    "dcterms.created": "created",
    "dcterms.modified": "modified",
    "date": "created",
}
_PREPARSED_ALIASES = {
    "author": "author",
    "authors": "author",
    "subject": "subject",
    "description": "description",
    "created": "created",
    "creation_date": "created",
    "modified": "modified",
    "modification_date": "modified",
    "last_modified": "modified",
}


def with_metadata(sections: list[Section], values: Mapping[str, object] | None) -> list[Section]:
    """``sections`` with the document's metadata on the first one (unchanged without any)."""
    pairs = metadata_pairs(values)
    if not sections or not pairs:
        return sections
    return [replace(sections[0], doc_metadata=pairs), *sections[1:]]


def _date(value: object) -> str | None:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value) if value else None


def pdf_metadata(reader: Any) -> dict[str, str]:
    """A pypdf reader's document information (bad dates are left out, not fatal)."""
    info = reader.metadata
    if info is None:
        return {}
    values: dict[str, Any] = {"author": info.author, "subject": info.subject}
    for key, attribute in (("created", "creation_date"), ("modified", "modification_date")):
        try:
            values[key] = _date(getattr(info, attribute))
        except Exception:  # pypdf raises on a malformed date string
            values[key] = None
    return {k: str(v) for k, v in values.items() if v}


def docx_metadata(data: bytes) -> dict[str, str]:
    """A DOCX's core properties (``docProps/core.xml``), read straight from the zip."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            info = archive.getinfo(_CORE_XML)
            if info.file_size > _MAX_CORE_BYTES:
                return {}
            root = ElementTree.fromstring(archive.read(info))
    except (KeyError, zipfile.BadZipFile, ElementTree.ParseError):
        return {}
    values: dict[str, str] = {}
    for element in root:
        name = _CORE_NAMES.get(element.tag.rpartition("}")[2])
        if name and element.text and element.text.strip():
            values[name] = element.text.strip()
    return values


def html_metadata(tags: Iterable[Any]) -> dict[str, str]:
    """``<meta name|property=… content=…>`` tags of a page (the first of each kind wins)."""
    values: dict[str, str] = {}
    for tag in tags:
        if getattr(tag, "name", None) != "meta":
            continue
        key = str(tag.get("name") or tag.get("property") or "").strip().lower()
        name = _HTML_NAMES.get(key)
        content = tag.get("content")
        if name and isinstance(content, str) and content.strip():
            values.setdefault(name, content.strip())
    return values


def preparsed_metadata(metadata: Mapping[str, Any]) -> dict[str, str]:
    """A pre-parsed document's metadata under citewise's keys (lists joined by commas)."""
    values: dict[str, str] = {}
    for key, value in metadata.items():
        name = _PREPARSED_ALIASES.get(str(key).lower())
        if name is None or value is None:
            continue
        text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        if text.strip():
            values.setdefault(name, text.strip())
    return values
