"""Find a site's pages in its sitemaps: robots.txt's ``Sitemap:`` lines, else ``sitemap.xml``
beside the start page, else at the host's root; index files followed, each file bounded."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING

from citewise.errors import SourceError
from citewise.sources.crawl_fetch import Fetcher
from citewise.sources.crawl_limits import CrawlLimits, setting_name
from citewise.sources.crawl_links import normalize_url
from citewise.sources.crawl_state import PageState
from citewise.sources.robots import RobotRules
from citewise.sources.sitemap import parse_sitemap

if TYPE_CHECKING:
    from citewise.sources.crawl import CrawlReport, SiteScope

__all__ = ["discover"]


async def discover(
    fetcher: Fetcher,
    scope: SiteScope,
    robots: RobotRules,
    limits: CrawlLimits,
    known: Mapping[str, PageState],
    states: MutableMapping[str, PageState],
    report: CrawlReport,
) -> list[str]:
    """The page URLs the site's sitemaps list (every one, in or out of ``scope``: the caller
    filters); a sitemap that cannot be read is named in ``report.skipped``."""
    own = [normalize_url(u) for u in robots.sitemaps]
    groups = [own, [scope.site_url + "sitemap.xml"], [scope.origin + "/sitemap.xml"]]
    tried: set[str] = set()
    for group in groups:
        found = await _read_tree([u for u in group if u and u not in tried], fetcher, scope,
                                 robots, limits, known, states, report, tried)  # fmt: skip
        if any(scope.contains(normalize_url(u)) for u in found):
            return found
    return []


async def _read_tree(
    roots: list[str],
    fetcher: Fetcher,
    scope: SiteScope,
    robots: RobotRules,
    limits: CrawlLimits,
    known: Mapping[str, PageState],
    states: MutableMapping[str, PageState],
    report: CrawlReport,
    tried: set[str],
) -> list[str]:
    pages: list[str] = []
    pending = deque(roots)
    while pending:
        url = pending.popleft()
        if url in tried:
            continue
        if len(tried) >= limits.max_sitemaps:
            name = "max_sitemaps"
            report.limits.setdefault(name, f"read {limits.max_sitemaps} sitemaps, "
                                     f"{len(pending) + 1} more not read ({name}, "
                                     f"{setting_name(name)})")  # fmt: skip
            break
        if time.monotonic() > fetcher.deadline:
            name = "max_seconds"
            what = f"stopped reading sitemaps after {limits.max_seconds:g} s"
            report.limits.setdefault(name, f"{what} ({name}, {setting_name(name)})")
            break
        tried.add(url)
        if not scope.same_origin(url) or not robots.allows(url):
            report.skipped[url] = "a sitemap on another site, or disallowed by robots.txt"
            continue
        state = await _fetch(url, fetcher, scope, robots, limits, known, report)
        if state is None:
            continue
        states[url] = state
        if state.is_index:
            pending.extend(u for u in (normalize_url(x) for x in state.links) if u)
        else:
            pages.extend(state.links)
    return pages


async def _fetch(
    url: str,
    fetcher: Fetcher,
    scope: SiteScope,
    robots: RobotRules,
    limits: CrawlLimits,
    known: Mapping[str, PageState],
    report: CrawlReport,
) -> PageState | None:
    previous = known.get(url)
    found = await fetcher.get(
        url, allowed=lambda u: scope.same_origin(u) and robots.allows(u),
        max_bytes=limits.max_sitemap_bytes,
        headers=previous.conditional_headers() if previous is not None else None,
    )  # fmt: skip
    if found.status == 304 and previous is not None:
        return previous
    if found.problem or found.status != 200:
        if found.status != 404:
            report.skipped[url] = found.problem or f"HTTP {found.status}"
        return None
    try:
        sitemap = parse_sitemap(found.body, url, max_bytes=limits.max_sitemap_bytes)
    except SourceError as error:
        report.skipped[url] = str(error)
        return None
    return found.remembered(links=sitemap.locations, is_index=sitemap.is_index)
