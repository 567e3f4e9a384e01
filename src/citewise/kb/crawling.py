"""A published docs site as a knowledge base: crawl it (``citewise.sources.crawl``), parse each
page's HTML, then ingest the whole set in one write through the one pipeline.

Each page's document id is its path under the start URL's folder (``guide/`` →
``guide/index.html``), so its sections' URLs are the fetched page's URL plus the ids the page
carries. What the crawl recorded per URL (validators, body hash, links) is kept beside the
knowledge bases (``{home}/crawl/{kb}.json``, written once the ingest committed); an entry is
trusted only while the stored document still has the fingerprint it implies, so a stale or
lost file costs downloads, never a wrong index.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from citewise.chunking import NO_OVERLAP
from citewise.errors import KnowledgeBaseError, SourceError, TooLargeError
from citewise.kb.config import META_STRATEGY
from citewise.kb.ingest import IndexReport, IngestItem, Progress, fingerprint
from citewise.kb.ingesting import _ingest
from citewise.limits import Limits, check_section_count, check_text_size
from citewise.models import Section
from citewise.parsing.html import parse_html
from citewise.sources.crawl import ClientFactory, CrawlResult, crawl_site
from citewise.sources.crawl_limits import CrawlLimits
from citewise.sources.crawl_state import PageState, load_state, save_state
from citewise.sources.scopes import scope_of

if TYPE_CHECKING:
    from citewise.kb.knowledge_base import KnowledgeBase

__all__ = ["crawl_state_path", "index_url"]


def crawl_state_path(kb: KnowledgeBase) -> Path:
    """Where the crawl of ``kb`` keeps what it recorded per URL."""
    return kb.settings.home / "crawl" / f"{kb.name}.json"


def index_url(
    kb: KnowledgeBase,
    url: str,
    *,
    limits: CrawlLimits | None = None,
    progress: Progress | None = None,
    rebuild: bool = False,
    replace: bool = False,
    client_factory: ClientFactory | None = None,
) -> IndexReport:
    """Crawl the site under ``url`` and bring the knowledge base in line with it: new and
    changed pages indexed (only changed chunks embedded), unchanged ones (304, or the same
    bytes) neither parsed nor embedded, pages gone from the site (404/410, or no longer listed
    nor linked) removed. A crawl cut short by a bound removes only pages answered 404/410.

    Nothing is written unless the whole set is parsed and embedded. The report's ``skipped``
    names each URL not indexed with why, ``limits`` each bound hit, ``crawl`` the counts.

    Raises:
        DownloadError, SourceError: the start URL cannot be crawled (unreachable, not HTML,
            closed by robots.txt), or no page under it could be indexed.
        KnowledgeBaseError: the knowledge base holds another source (unless ``replace``).
    """
    limits = limits or CrawlLimits.from_env()
    path = crawl_state_path(kb)
    with kb.write_lock():
        meta = kb.meta() if kb.exists else {}
        config = kb.config if kb.exists and META_STRATEGY in meta else None
        max_chars = config.strategy.parent_chars if config else kb.settings.max_chars
        overlap = config.strategy.chunk_overlap if config else NO_OVERLAP
        shape = {"max_chars": str(max_chars), "crawl": "1"}
        if overlap.size:
            shape["overlap"] = f"{overlap.size} {overlap.unit}"
        stored = {d.doc_id: d for d in kb.documents()} if kb.exists else {}
        saved = load_state(path)

        def page_print(state: PageState, site_url: str) -> str:
            scope = scope_of(state.doc_id)
            values = {**shape, "site_url": site_url, "scope": scope}
            return fingerprint(state.sha256.encode(), values)

        def trusted(site_url: str) -> dict[str, PageState]:
            """The recorded URLs a 304 may stand for: the stored document is the one the
            state describes (pages), or nothing is stored from it (robots.txt, sitemaps)."""
            return {
                u: s for u, s in saved.items()
                if not s.doc_id or (not rebuild and s.doc_id in stored
                                    and stored[s.doc_id].content_hash == page_print(s, site_url))
            }  # fmt: skip

        recorded_site = meta.get("site_url", "")
        result = crawl_site(url, limits, trusted(recorded_site), client_factory=client_factory)
        site_url = result.site_url
        if kb.exists and not (rebuild or replace):
            _check_source(kb, meta.get("source", ""), site_url)
        if site_url != recorded_site and any(p.html is None for p in result.pages):
            # The folder the pages sit under moved: their fingerprints did too, so 304s
            # cannot stand for them; fetch again, unconditionally.
            result = crawl_site(url, limits, trusted(site_url), client_factory=client_factory)
        if not result.pages:
            raise SourceError(
                f"no page under {site_url} could be indexed: "
                + ("; ".join(f"{u}: {why}" for u, why in list(result.report.skipped.items())[:3])
                   or "the start page links to no page")
            )  # fmt: skip
        items: list[IngestItem] = []
        refused: dict[str, str] = {}
        size_limits = kb.settings.parsing().limits
        for page in result.pages:
            print_ = page_print(page.state, site_url)
            unchanged = page.doc_id in stored and stored[page.doc_id].content_hash == print_
            if page.html is None or (unchanged and not rebuild):
                items.append(IngestItem(page.doc_id, print_, _never(page.doc_id),
                                        label=page.url, scope=scope_of(page.doc_id)))  # fmt: skip
                continue
            try:
                items.append(_parsed(page.doc_id, page.html, print_, site_url, page.url,
                                     size_limits))  # fmt: skip
            except TooLargeError as error:  # this page alone is refused, the crawl goes on
                refused[page.url] = str(error)
                result.failed.add(page.doc_id)
        kept = _kept(result, stored, {item.doc_id for item in items}, rebuild)
        items += [IngestItem(d, stored[d].content_hash, _never(d), scope=stored[d].scope)
                  for d in sorted(kept)]  # fmt: skip
        extra = {"source": site_url, "site_url": site_url, "version": "", "crawl_url": url,
                 "max_chars": str(max_chars)}  # fmt: skip
        report = _ingest(kb, items, config, remove_missing=True, meta=extra, progress=progress,
                         rebuild=rebuild)  # fmt: skip
        states = {u: s for u, s in saved.items() if s.doc_id in kept}
        save_state(path, {**states, **result.states})
    report.files = len(result.pages)
    report.skipped = {**result.report.skipped, **refused}
    report.limits = dict(result.report.limits)
    crawl = result.report
    report.crawl = {"site_url": site_url, "pages_from": crawl.pages_from,
                    "requests": crawl.requests, "retries": crawl.retries, "pages": crawl.pages,
                    "not_modified": crawl.not_modified, "bytes": crawl.bytes,
                    "seconds": round(crawl.seconds, 3), "complete": crawl.complete,
                    **{f"skipped_{k}": n for k, n in sorted(crawl.counts.items())}}  # fmt: skip
    return report


def _check_source(kb: KnowledgeBase, recorded: str, site_url: str) -> None:
    if recorded and recorded != site_url:
        raise KnowledgeBaseError(
            f"knowledge base {kb.name!r} was indexed from {recorded}, not {site_url}: "
            "crawling this site would replace its documents. Choose another knowledge base, "
            "or replace them on purpose (citewise index --replace, or replace=True)"
        )


def _kept(
    result: CrawlResult, stored: Mapping[str, object], crawled: set[str], rebuild: bool
) -> set[str]:
    """Stored documents this crawl did not read but must keep: pages it failed to read this
    time (a timeout, a 5xx) and, when a bound cut it short, every page it did not reach."""
    if rebuild:
        return set()
    missing = set(stored) - crawled - result.gone
    return missing if not result.report.complete else missing & result.failed


def _parsed(
    doc_id: str, html: str, print_: str, site_url: str, url: str, limits: Limits
) -> IngestItem:
    """A changed page, parsed now under the limits every parsed file has (sections, text)."""
    scope = scope_of(doc_id)
    sections = parse_html(html, doc_id=doc_id, site_url=site_url, version=None, scope=scope)
    check_section_count(limits, url, len(sections))
    check_text_size(limits, url, (section.text for section in sections))
    return IngestItem(doc_id, print_, lambda: sections, label=url, scope=scope)


def _never(doc_id: str) -> Callable[[], list[Section]]:
    """The sections of a page kept as stored: its fingerprint matches, so never called."""

    def sections() -> list[Section]:
        raise SourceError(f"{doc_id}: unchanged since the last crawl, but not stored: "
                          "crawl again (its recorded state is out of date)")  # fmt: skip

    return sections
