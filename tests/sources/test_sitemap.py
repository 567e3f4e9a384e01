"""Sitemap files and robots.txt read on their own: index files, gzip, text sitemaps, refusals."""

from __future__ import annotations

import gzip
import zlib

import pytest

from citewise.errors import SourceError, TooLargeError
from citewise.sources.robots import RobotRules, robots_from_status
from citewise.sources.sitemap import parse_sitemap

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def test_urlset_and_index_in_any_namespace_gzipped_or_not() -> None:
    urlset = f"<urlset {NS}><url><loc> https://x.org/a/ </loc></url><url><loc>https://x.org/b</loc></url></urlset>"
    assert parse_sitemap(urlset.encode(), "s", max_bytes=10_000).locations == (
        "https://x.org/a/", "https://x.org/b",
    )  # fmt: skip
    index = "<sitemapindex><sitemap><loc>https://x.org/s1.xml.gz</loc></sitemap></sitemapindex>"
    found = parse_sitemap(gzip.compress(index.encode()), "s", max_bytes=10_000)
    assert found.is_index and found.locations == ("https://x.org/s1.xml.gz",)
    text = b"https://x.org/a/\nhttps://x.org/b\n"
    assert parse_sitemap(text, "s", max_bytes=100).locations == (
        "https://x.org/a/",
        "https://x.org/b",
    )


def test_hostile_sitemaps_are_refused() -> None:
    bomb = b'<!DOCTYPE x [<!ENTITY a "aaaa">]><urlset><url><loc>&a;</loc></url></urlset>'
    with pytest.raises(SourceError, match="DOCTYPE"):
        parse_sitemap(bomb, "s", max_bytes=10_000)
    inflating = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    data = inflating.compress(b"<urlset>" + b" " * 5_000_000) + inflating.flush()
    with pytest.raises(TooLargeError, match="inflates to more than"):
        parse_sitemap(data, "s", max_bytes=1_000_000)
    with pytest.raises(SourceError, match="not a sitemap"):
        parse_sitemap(b"<html><body>hi</body></html>", "s", max_bytes=10_000)


def test_robots_rules() -> None:
    rules = RobotRules.parse(
        "User-agent: citewise\nDisallow: /private/\nCrawl-delay: 2\n\n"
        "User-agent: *\nDisallow: /\nSitemap: https://x.org/sitemap.xml\n"
    )
    assert rules.allows("https://x.org/docs/") and not rules.allows("https://x.org/private/a")
    assert rules.crawl_delay == 2 and rules.sitemaps == ("https://x.org/sitemap.xml",)
    assert robots_from_status(404, "", "u").allows("https://x.org/anything")
    assert not robots_from_status(503, "", "u").allows("https://x.org/docs/")
