"""The ``doc_metadata`` search filter: only documents whose metadata holds given values.

Resolved here, in the service layer, to the ``doc_ids`` filter every store already applies
(SQLite, PostgreSQL, the dense matrix and the HNSW index alike): the documents whose
metadata matches, intersected with any ``doc_ids`` the request gave. A value matches a
document's when both are equal ignoring case and surrounding space.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from citewise.errors import ConfigurationError
from citewise.models import Document
from citewise.options import SearchOptions

__all__ = ["matches", "narrowed", "parse_metadata_flags"]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def matches(document: Document, wanted: Mapping[str, str]) -> bool:
    """Whether ``document``'s metadata has every wanted value."""
    have = {key.casefold(): _norm(value) for key, value in document.metadata}
    return all(have.get(key.casefold()) == _norm(value) for key, value in wanted.items())


def narrowed(options: SearchOptions, documents: Sequence[Document]) -> SearchOptions:
    """``options`` with ``doc_metadata`` applied as ``doc_ids`` (unchanged without it); no
    matching document gives an empty ``doc_ids``, so the search finds nothing."""
    if not options.doc_metadata:
        return options
    found = [d.doc_id for d in documents if matches(d, options.doc_metadata)]
    if options.doc_ids is not None:
        allowed = set(options.doc_ids)
        found = [doc_id for doc_id in found if doc_id in allowed]
    return options.replaced(doc_ids=tuple(found))


def parse_metadata_flags(values: Sequence[str] | None) -> dict[str, str] | None:
    """``--metadata KEY=VALUE`` flags as a mapping (None: no flag)."""
    if not values:
        return None
    out: dict[str, str] = {}
    for value in values:
        key, sep, wanted = value.partition("=")
        if not sep or not key.strip() or not wanted.strip():
            raise ConfigurationError(f"--metadata {value!r}: expected KEY=VALUE, e.g. author=Ada")
        out[key.strip()] = wanted.strip()
    return out
