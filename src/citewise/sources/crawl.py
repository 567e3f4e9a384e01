"""Crawl a published docs site under its start URL: the HTML of every page, bounded.

Pages come from the site's sitemaps (robots.txt ``Sitemap:`` lines, ``sitemap.xml`` beside
the start page or at the host's root; index files and gzip read) and from following links,
breadth first, never leaving the start URL's folder; robots.txt is honoured. Every bound is a
:class:`~citewise.sources.crawl_limits.CrawlLimits` setting and is reported by name when hit.
A re-crawl sends the validators the last one recorded (:mod:`citewise.sources.crawl_state`),
so an unchanged page costs a 304 and no download.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from citewise.asyncbridge import run_sync
from citewise.errors import ConfigurationError, DownloadError, SourceError
from citewise.sources.crawl_fetch import Fetched, Fetcher
from citewise.sources.crawl_limits import CrawlLimits, setting_name
from citewise.sources.crawl_links import decode_html, normalize_url, read_links
from citewise.sources.crawl_sitemaps import discover
from citewise.sources.crawl_state import PageState
from citewise.sources.robots import RobotRules, robots_from_status

__all__ = ["CrawlReport", "CrawlResult", "CrawledPage", "SiteScope", "crawl_site", "is_html"]

# Bounds that leave pages unseen: a crawl that hit one removes nothing it did not see.
STOPPING_LIMITS = frozenset({"max_pages", "max_depth", "max_total_bytes", "max_seconds",
                             "max_sitemaps"})  # fmt: skip
_GONE = frozenset({404, 410})
_ROBOTS_BYTES = 512 * 1024  # RFC 9309: at least 500 KiB of robots.txt is read
_HTML_TYPES = ("text/html", "application/xhtml+xml")
# Links to these are files, not pages: not requested (the Content-Type check is the gate
# for the rest).
_FILE_SUFFIXES = frozenset(
    ".png .jpg .jpeg .gif .svg .webp .ico .bmp .css .js .mjs .map .json .xml .txt .rst .md "
    ".pdf .zip .gz .tgz .tar .bz2 .xz .whl .egg .woff .woff2 .ttf .eot .otf .mp4 .webm .mp3 "
    ".wav .ipynb .py .csv .epub .inv .doctree .pickle".split()
)


def is_html(content_type: str) -> bool:
    """A Content-Type of a web page (a missing one is taken as HTML, as browsers sniff it)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    return not kind or kind in _HTML_TYPES


@dataclass(frozen=True)
class SiteScope:
    """The site a crawl stays in: URLs under ``site_url`` (a folder URL ending in ``/``)."""

    site_url: str

    @classmethod
    def of(cls, page_url: str) -> SiteScope:
        return cls(page_url[: page_url.rindex("/") + 1])

    @property
    def origin(self) -> str:
        parts = urlsplit(self.site_url)
        return f"{parts.scheme}://{parts.netloc}"

    def contains(self, url: str) -> bool:
        return url.startswith(self.site_url)

    def same_origin(self, url: str) -> bool:
        return url.startswith(self.origin + "/")

    def doc_id(self, url: str) -> str:
        """The page's document id: its path under the site (a folder URL ``guide/`` →
        ``guide/index.html``), so ``site_url + file_page(doc_id)`` is the URL again."""
        relative = url[len(self.site_url) :]
        return relative + "index.html" if not relative or relative.endswith("/") else relative


@dataclass(frozen=True)
class CrawledPage:
    """A page of the site: ``html`` is None when it is unchanged since the last crawl (304)."""

    url: str
    doc_id: str
    state: PageState
    html: str | None


@dataclass
class CrawlReport:
    """What a crawl did; ``limits`` names each bound hit (setting → what it cut)."""

    start_url: str
    site_url: str = ""
    pages_from: str = "links"  # "sitemap" when a sitemap listed pages under the start URL
    requests: int = 0
    retries: int = 0
    pages: int = 0  # HTML pages read or confirmed unchanged
    not_modified: int = 0
    bytes: int = 0  # decoded bytes of the pages read
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)  # skipped URLs by reason kind
    skipped: dict[str, str] = field(default_factory=dict)  # URL → why it is not indexed
    limits: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Every page reachable was seen: pages missing from it are gone from the site."""
        return not STOPPING_LIMITS & set(self.limits)


@dataclass
class CrawlResult:
    """The pages found, what to remember for the next crawl, and what left the site."""

    site_url: str
    pages: list[CrawledPage]
    report: CrawlReport
    states: dict[str, PageState]  # every URL to send validators for next time
    gone: set[str] = field(default_factory=set)  # doc ids answered 404/410
    failed: set[str] = field(default_factory=set)  # doc ids not read this time (kept)


ClientFactory = Callable[[CrawlLimits], httpx.AsyncClient]


def crawl_site(
    url: str,
    limits: CrawlLimits | None = None,
    known: Mapping[str, PageState] | None = None,
    *,
    client_factory: ClientFactory | None = None,
) -> CrawlResult:
    """Crawl the site under ``url``; ``known`` holds what the last crawl recorded per URL.

    Raises:
        DownloadError: the start URL cannot be reached, or answers an HTTP error.
        SourceError: the start URL is not an HTML page, or robots.txt closes it to crawlers.
        ConfigurationError: ``url`` is not an http(s) URL.
    """
    return run_sync(_Crawl(url, limits or CrawlLimits(), known or {}, client_factory).run())


def _client(limits: CrawlLimits) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        timeout=httpx.Timeout(limits.timeout),
        follow_redirects=False,  # each hop is checked against the start path
        limits=httpx.Limits(max_connections=limits.concurrency),
    )


class _Crawl:
    def __init__(
        self,
        url: str,
        limits: CrawlLimits,
        known: Mapping[str, PageState],
        client_factory: ClientFactory | None,
    ) -> None:
        self.start = normalize_url(url)
        if not self.start:
            raise ConfigurationError(f"not an http(s) URL to crawl: {url!r}")
        self.limits = limits
        self.known = known
        self.make_client = client_factory or _client
        self.report = CrawlReport(start_url=self.start)
        self.started = time.monotonic()
        self.deadline = self.started + limits.max_seconds
        self.robots = RobotRules()
        self.scope = SiteScope.of(self.start)
        self.pages: dict[str, CrawledPage] = {}
        self.states: dict[str, PageState] = {}
        self.gone: set[str] = set()
        self.failed: set[str] = set()
        self.queued: set[str] = set()
        self.frontier: deque[tuple[str, int]] = deque()
        self.requested = 0
        self.counts: Counter[str] = Counter()

    async def run(self) -> CrawlResult:
        async with self.make_client(self.limits) as client:
            fetcher = Fetcher(client, self.limits, self.deadline)
            try:
                first = await self._begin(fetcher)
                self._page(self.start, 0, first)
                if self.report.pages_from == "sitemap" or self.frontier:
                    await self._walk(fetcher)
            finally:
                self.report.requests = fetcher.requests
                self.report.retries = fetcher.retried
        self.report.counts = dict(self.counts)
        self.report.seconds = time.monotonic() - self.started
        pages = sorted(self.pages.values(), key=lambda page: page.doc_id)
        return CrawlResult(self.scope.site_url, pages, self.report, self.states, self.gone,
                           self.failed - {page.doc_id for page in pages})  # fmt: skip

    async def _begin(self, fetcher: Fetcher) -> Fetched:
        """robots.txt, then the start page (its final URL sets the site's folder), then the
        sitemaps; a start that cannot be crawled is an error naming why."""
        self.robots = await self._robots(fetcher)
        if self.robots.closed:
            raise SourceError(self.robots.closed)
        if not self.robots.allows(self.start):
            raise SourceError(f"robots.txt of {self.scope.origin} disallows {self.start} for "
                              "citewise: the site is closed to crawlers")  # fmt: skip
        fetcher.crawl_delay = min(self.robots.crawl_delay, self.limits.max_retry_wait)
        same_site = self.scope.same_origin
        first = await fetcher.get(
            self.start, allowed=lambda u: same_site(u) and self.robots.allows(u),
            max_bytes=self.limits.max_page_bytes, accept=is_html,
            headers=self._validators(self.start),
        )  # fmt: skip
        self.requested += 1
        self._check_start(first)
        final = normalize_url(first.url) or self.start
        self.scope = SiteScope.of(final)
        self.report.site_url = self.scope.site_url
        self.queued.update({self.start, final})
        found = await discover(fetcher, self.scope, self.robots, self.limits, self.known,
                               self.states, self.report)  # fmt: skip
        for location in found:
            url = normalize_url(location)
            if url and self.scope.contains(url) and url not in self.queued:
                if self._excluded(url):
                    continue
                self._enqueue(url, 1)
        if self.frontier:
            self.report.pages_from = "sitemap"
        return first

    async def _robots(self, fetcher: Fetcher) -> RobotRules:
        url = self.scope.origin + "/robots.txt"
        known = self.known.get(url)
        headers = known.conditional_headers() if known else None
        found = await fetcher.get(
            url, allowed=self.scope.same_origin, max_bytes=_ROBOTS_BYTES, headers=headers
        )
        if found.kind == "network":
            raise DownloadError(f"cannot reach {self.start}: {found.problem}")
        if found.status == 304 and known is not None:
            self.states[url] = known
            return RobotRules.parse(known.text)
        if found.problem:
            return RobotRules()  # an unusable robots.txt (too big, redirected away) is none
        text = found.body.decode("utf-8", "replace")
        if found.status == 200:
            self.states[url] = found.remembered(text=text)
        return robots_from_status(found.status, text, url)

    def _check_start(self, found: Fetched) -> None:
        if found.kind == "network":
            raise DownloadError(f"cannot reach {self.start}: {found.problem}")
        if found.kind == "not_html":
            raise SourceError(f"{self.start} is not an HTML page: {found.problem}")
        if found.kind == "redirect_refused":
            raise SourceError(f"{self.start} {found.problem}: crawl that URL instead")
        if found.problem:
            raise SourceError(f"{self.start}: {found.problem}")
        if found.status == 304 and normalize_url(found.url) in self.known:
            return
        if found.status != 200:
            raise DownloadError(f"{self.start}: HTTP {found.status}")

    def _validators(self, url: str) -> dict[str, str]:
        known = self.known.get(url)
        return known.conditional_headers() if known is not None and known.doc_id else {}

    def _enqueue(self, url: str, depth: int) -> None:
        self.queued.add(url)
        self.frontier.append((url, depth))

    async def _walk(self, fetcher: Fetcher) -> None:
        running: dict[asyncio.Task[Fetched], tuple[str, int]] = {}
        try:
            while self.frontier or running:
                while self.frontier and len(running) < self.limits.concurrency:
                    if self.requested >= self.limits.max_pages:
                        self._limit("max_pages", f"stopped after {self.requested:,} pages; "
                                    f"{len(self.frontier):,} more found")  # fmt: skip
                        self.frontier.clear()
                        break
                    url, depth = self.frontier.popleft()
                    self.requested += 1
                    task = asyncio.create_task(self._get(fetcher, url))
                    running[task] = (url, depth)
                if not running:
                    break
                left = self.deadline - time.monotonic()
                done, _ = await asyncio.wait(running, timeout=max(left, 0),
                                             return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
                if not done:
                    unseen = len(running) + len(self.frontier)
                    self._limit("max_seconds", f"stopped after {self.limits.max_seconds:g} s; "
                                f"{unseen:,} pages not fetched")  # fmt: skip
                    return
                for task in done:
                    url, depth = running.pop(task)
                    self._page(url, depth, task.result())
                    if self.report.bytes > self.limits.max_total_bytes and self.frontier:
                        self._limit("max_total_bytes", f"stopped after {self.report.bytes:,} "
                                    f"bytes; {len(self.frontier):,} pages not fetched")  # fmt: skip
                        self.frontier.clear()
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)

    async def _get(self, fetcher: Fetcher, url: str) -> Fetched:
        return await fetcher.get(
            url, allowed=lambda u: self.scope.contains(u) and self.robots.allows(u),
            max_bytes=self.limits.max_page_bytes, accept=is_html, headers=self._validators(url),
        )  # fmt: skip

    def _limit(self, name: str, what: str) -> None:
        self.report.limits.setdefault(name, f"{what} ({name}, {setting_name(name)})")

    def _skip(self, url: str, kind: str, why: str) -> None:
        self.counts[kind] += 1
        self.report.skipped[url] = why
        if self.scope.contains(url) and kind not in (
            "gone",
            "duplicate",
            "noindex",
            "redirect_stub",
            "source_listing",
        ):
            self.failed.add(self.scope.doc_id(url))

    def _page(self, url: str, depth: int, found: Fetched) -> None:
        """Take one response: a page to index, unchanged, gone, or skipped with why."""
        if found.problem:
            self._skip(url, found.kind, found.problem)
            if found.kind in ("max_page_bytes", "page_seconds"):
                self._limit(found.kind, f"{self.counts[found.kind]:,} pages skipped")
            return
        final = normalize_url(found.url) or url
        self.queued.add(final)
        doc_id = self.scope.doc_id(final)
        if found.status in _GONE:
            self.gone.add(doc_id)
            self._skip(url, "gone", f"HTTP {found.status}: gone from the site")
            return
        if found.status not in (200, 304):
            self._skip(url, "http_error", f"HTTP {found.status}")
            return
        if doc_id in self.pages:
            self._skip(url, "duplicate", f"the same page as {self.pages[doc_id].url}")
            return
        if found.status == 304:
            state = self.known.get(final)
            if state is None:
                self._skip(url, "http_error", "HTTP 304 to an unconditional request")
                return
            self.report.not_modified += 1
            html = None
        else:
            html = decode_html(found.body, found.headers.get("content-type", ""))
            self.report.bytes += len(found.body)
            state = self._fresh_state(found, html, doc_id, depth)
            if state is None:
                return
        self.report.pages += 1
        self.states[final] = state
        self.pages[doc_id] = CrawledPage(final, doc_id, state, html)
        self._follow(state.links, depth)

    def _fresh_state(self, found: Fetched, html: str, doc_id: str, depth: int) -> PageState | None:
        """The state of a page just read; None (after following its links) when it is not
        itself indexed: a copy of its canonical page, or ``noindex``."""
        final = normalize_url(found.url)
        read = read_links(html, final)
        links = tuple(u for u in read.links if self.scope.contains(u) and _is_page(u))
        canonical = read.canonical
        if canonical and canonical != final and self.scope.contains(canonical):
            self._skip(found.url, "duplicate", f"a copy of its canonical page {canonical}")
            if canonical not in self.queued:
                self._enqueue(canonical, depth)
            return None
        if read.refresh and read.refresh != final:
            self._skip(found.url, "redirect_stub", f"a refresh redirect to {read.refresh}")
            if self.scope.contains(read.refresh) and read.refresh not in self.queued:
                self._enqueue(read.refresh, depth)
            return None
        if read.noindex or read.source_listing:
            kind, why = (
                ("noindex", "the page asks not to be indexed (robots noindex)")
                if read.noindex
                else ("source_listing", "a generated source-code listing (Sphinx viewcode)")
            )
            self._skip(found.url, kind, why)
            self._follow(links, depth)
            return None
        return found.remembered(doc_id=doc_id, links=links)

    def _excluded(self, url: str) -> bool:
        if not self.limits.exclude or not self.limits.excludes(url[len(self.scope.site_url) :]):
            return False
        self.queued.add(url)
        self.counts["excluded"] += 1
        return True

    def _follow(self, links: tuple[str, ...], depth: int) -> None:
        for link in links:
            if link in self.queued or self._excluded(link):
                continue
            if depth + 1 > self.limits.max_depth:
                self._limit("max_depth", f"links deeper than {self.limits.max_depth} not followed")
                continue
            if not self.robots.allows(link):
                self.queued.add(link)
                self._skip(link, "robots", "disallowed by robots.txt")
                self.failed.discard(self.scope.doc_id(link))
                continue
            self._enqueue(link, depth + 1)


def _is_page(url: str) -> bool:
    name = url.rsplit("/", 1)[-1].lower()
    return "." not in name or "." + name.rsplit(".", 1)[-1] not in _FILE_SUFFIXES
