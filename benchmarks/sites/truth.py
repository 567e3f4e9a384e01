"""A built docs site's ground truth beside citewise's citations: broken both ways (issue 23).

The truth (``_site-truth.json``, written by the shared ``sphinx_truth.py``/``mkdocs_truth.py``
from a site built with its own toolchain) holds every page with the ids on it and its sections,
and the ``objects.inv`` entries.  Two directions are measured, as the shared ``compare.py`` does:
a citation is *broken* when its page is not on the site or its anchor is not on the page; a
site section or API object is *missed* when citewise cites neither its page-top nor any of its
ids.  One difference: a section whose ids are all API objects' anchors (the search-index entry
of an mkdocstrings heading) is that API object, counted once, where compare.py counts it twice
(as a prose section and as an object).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from citewise.errors import ConfigurationError

__all__ = ["Citation", "SiteTruth", "TruthEntry", "compare_citations", "load_truth"]

PROSE = "section"


@dataclass(frozen=True)
class Citation:
    """One section as citewise cites it."""

    url: str
    heading: str
    doc_id: str


@dataclass(frozen=True)
class TruthEntry:
    """One section of the site, or one API object of its inventory (``origin`` ``api:TYPE``)."""

    page: str
    ids: tuple[str, ...]
    title: str
    origin: str
    page_top: bool  # the page's first section: citing the bare page URL finds it


@dataclass(frozen=True)
class SiteTruth:
    """Pages (each with every id on it) and the sections and API objects citewise should cite."""

    page_ids: Mapping[str, frozenset[str]]
    entries: tuple[TruthEntry, ...]


def load_truth(path: Path, generator: str) -> SiteTruth:
    """Read ``_site-truth.json``; only ``py:`` inventory entries count as API objects of a
    Sphinx site (its ``std:`` labels are prose sections already listed)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        pages: dict[str, Any] = data["pages"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConfigurationError(f"{path}: not a site truth file ({error})") from error
    if generator not in ("sphinx", "mkdocs"):
        raise ConfigurationError(f"{path}: unknown generator {generator!r} (sphinx or mkdocs)")
    page_ids = {page: frozenset(info["all_ids"]) for page, info in pages.items()}
    objects: list[TruthEntry] = []
    for item in data.get("inventory", []):
        if generator == "sphinx" and not item["type"].startswith("py:"):
            continue
        page, _, anchor = item["uri"].partition("#")
        objects.append(TruthEntry(page, (anchor,), item["name"], "api:" + item["type"], False))
    api_anchors = {(entry.page, entry.ids[0]) for entry in objects}
    entries: list[TruthEntry] = []
    for page, info in pages.items():
        for position, section in enumerate(info["sections"]):
            ids = tuple(section["ids"])
            if ids and all((page, anchor) in api_anchors for anchor in ids):
                continue  # an object's heading (mkdocstrings): counted once, as the API object
            # Sphinx: a page's first <section> is its h1; MkDocs: the entry without an anchor
            top = position == 0 if generator == "sphinx" else not ids
            origin = section.get("origin", PROSE)
            entries.append(TruthEntry(page, ids, section["title"], origin, top))
    return SiteTruth(page_ids, tuple(entries + objects))


def _split(url: str, base_url: str) -> tuple[str, str] | None:
    """(page, anchor) of a citation under the site's base URL; None outside it."""
    if not url.startswith(base_url):
        return None
    page, _, anchor = url[len(base_url) :].partition("#")
    return page, unquote(anchor)


def _share(count: int, total: int) -> float:
    return round(100.0 * count / total, 2) if total else 0.0


def compare_citations(
    citations: Iterable[Citation], truth: SiteTruth, base_url: str
) -> dict[str, Any]:
    """Both directions: ``summary`` (counts, shares in percent, misses by origin) and the lists
    ``broken``, ``missed`` and ``duplicates`` to look at."""
    cited = list(citations)
    produced: Counter[tuple[str, str]] = Counter()
    broken: list[dict[str, str]] = []
    for citation in cited:
        where = _split(citation.url, base_url)
        why = ""
        if where is None:
            why = "outside the site"
        else:
            produced[where] += 1
            page, anchor = where
            if page not in truth.page_ids:
                why = "page not in site"
            elif anchor and anchor not in truth.page_ids[page]:
                why = "anchor not on page"
        if why:
            broken.append({"url": citation.url, "why": why, "heading": citation.heading,
                           "doc_id": citation.doc_id})  # fmt: skip
    duplicates = sorted(f"{base_url}{page}#{anchor}" if anchor else f"{base_url}{page}"
                        for (page, anchor), n in produced.items() if n > 1)  # fmt: skip
    missed: list[dict[str, Any]] = []
    seen: set[tuple[str, tuple[str, ...], str]] = set()
    prose_total = 0
    api_keys: set[tuple[str, str]] = set()
    for entry in truth.entries:
        if entry.origin.startswith("api:"):
            api_keys.add((entry.page, entry.ids[0]))
        else:
            prose_total += 1
        key = (entry.page, entry.ids, entry.origin)
        if key in seen:
            continue
        seen.add(key)
        if entry.page_top and (entry.page, "") in produced:
            continue
        if any((entry.page, anchor) in produced for anchor in entry.ids):
            continue
        missed.append({"page": entry.page, "ids": list(entry.ids), "title": entry.title,
                       "origin": entry.origin,
                       "page_produced": (entry.page, "") in produced})  # fmt: skip
    missed_api = sum(1 for m in missed if m["origin"].startswith("api:"))
    summary = {
        "citewise_rows": len(cited),
        "citewise_unique": len(produced),
        "citewise_pages": len({page for page, _ in produced}),
        "site_pages": len(truth.page_ids),
        "site_sections": prose_total,
        "site_api_objects": len(api_keys),
        "broken": len(broken),
        "broken_pct": _share(len(broken), len(cited)),
        "broken_by_reason": dict(Counter(b["why"] for b in broken).most_common()),
        "duplicate_urls": len(duplicates),
        "missed_sections": len(missed) - missed_api,
        "missed_sections_pct": _share(len(missed) - missed_api, prose_total),
        "missed_api": missed_api,
        "missed_api_pct": _share(missed_api, len(api_keys)),
        "missed_by_origin": dict(Counter(m["origin"] for m in missed).most_common()),
    }
    return {"summary": summary, "broken": broken, "missed": missed, "duplicates": duplicates}
