"""The crawler against a real HTTP server on 127.0.0.1: sitemaps, links, robots.txt, scope."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from citewise.errors import ConfigurationError, DownloadError, SourceError
from citewise.sources.crawl import crawl_site
from citewise.sources.crawl_limits import CrawlLimits
from tests.sources.crawl_support import DocsServer, gzipped, html_page

FAST = CrawlLimits(max_seconds=20, page_seconds=5, timeout=5, max_retry_wait=1)


@pytest.fixture
def server() -> Iterator[DocsServer]:
    site = DocsServer()
    yield site
    site.close()


def built_site(site: DocsServer) -> None:
    """A small built site under /docs/1.2/: a sitemap index (robots.txt names it) with a
    gzipped child; one page only the sitemap lists, one only a link reaches."""
    base = "/docs/1.2/"
    site.page(base, html_page("Home", ("intro", "Welcome."), links=("guide/", "api.html")))
    site.page(base + "guide/", html_page("Guide", ("install", "pip install it."),
                                         links=("../", "linked-only.html")))  # fmt: skip
    site.page(base + "api.html", html_page("API", ("client", "The Client class.")))
    site.page(base + "guide/linked-only.html", html_page("Linked", ("deep", "Only linked.")))
    site.page(base + "orphan.html", html_page("Orphan", ("alone", "Only in the sitemap.")))
    site.page("/elsewhere.html", html_page("Elsewhere", ("out", "Outside the start path.")))
    urls = [f"{site.url}{base}{p}" for p in ("", "guide/", "api.html", "orphan.html")]
    urls.append(site.url + "/elsewhere.html")
    urlset = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    child = (f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/'
             f'0.9">{urlset}</urlset>')  # fmt: skip
    site.files["/sitemaps/pages.xml.gz"] = ("application/gzip", gzipped(child.encode()))
    index = (f'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/'
             f'sitemap/0.9"><sitemap><loc>{site.url}/sitemaps/pages.xml.gz</loc></sitemap>'
             "</sitemapindex>")  # fmt: skip
    site.page("/sitemap-index.xml", index, "application/xml")
    robots = f"User-agent: *\nDisallow: /private/\nSitemap: {site.url}/sitemap-index.xml\n"
    site.page("/robots.txt", robots, "text/plain")


def test_pages_come_from_the_sitemap_index_and_links_under_the_start_path(
    server: DocsServer,
) -> None:
    built_site(server)
    result = crawl_site(server.url + "/docs/1.2/", FAST)
    assert result.report.pages_from == "sitemap"
    assert result.site_url == server.url + "/docs/1.2/"
    assert {p.doc_id: p.url for p in result.pages} == {
        "index.html": server.url + "/docs/1.2/",
        "guide/index.html": server.url + "/docs/1.2/guide/",
        "api.html": server.url + "/docs/1.2/api.html",
        "orphan.html": server.url + "/docs/1.2/orphan.html",
        "guide/linked-only.html": server.url + "/docs/1.2/guide/linked-only.html",
    }
    assert not server.requests_to("/elsewhere.html")  # listed, but off the start path
    assert result.report.complete and not result.report.limits


def test_without_a_sitemap_links_are_followed_breadth_first(server: DocsServer) -> None:
    built_site(server)
    del server.files["/robots.txt"], server.files["/sitemap-index.xml"]
    result = crawl_site(server.url + "/docs/1.2/", FAST)
    assert result.report.pages_from == "links"
    # The orphan is listed nowhere now: a link crawl cannot find it.
    assert sorted(p.doc_id for p in result.pages) == [
        "api.html", "guide/index.html", "guide/linked-only.html", "index.html",
    ]  # fmt: skip


def test_sitemap_xml_beside_the_start_page_is_found_without_robots(server: DocsServer) -> None:
    built_site(server)
    del server.files["/robots.txt"]
    server.files["/docs/1.2/sitemap.xml"] = server.files.pop("/sitemap-index.xml")
    result = crawl_site(server.url + "/docs/1.2/", FAST)
    assert result.report.pages_from == "sitemap"
    assert "orphan.html" in {p.doc_id for p in result.pages}


def test_depth_bound_is_reported_by_its_setting(server: DocsServer) -> None:
    built_site(server)
    del server.files["/robots.txt"], server.files["/sitemap-index.xml"]
    result = crawl_site(server.url + "/docs/1.2/", FAST.with_overrides(max_depth=1))
    assert "guide/linked-only.html" not in {p.doc_id for p in result.pages}
    assert "max_depth" in result.report.limits
    assert "CITEWISE_CRAWL_MAX_DEPTH" in result.report.limits["max_depth"]
    assert not result.report.complete


def test_robots_txt_closing_the_start_url_is_a_clear_error(server: DocsServer) -> None:
    built_site(server)
    server.page("/robots.txt", "User-agent: citewise\nDisallow: /docs/\n", "text/plain")
    with pytest.raises(SourceError, match="robots.txt .* disallows .*/docs/1.2/"):
        crawl_site(server.url + "/docs/1.2/", FAST)
    assert not server.requests_to("/docs/1.2/")


def test_robots_txt_disallowed_pages_are_skipped_and_counted(server: DocsServer) -> None:
    built_site(server)
    server.page("/robots.txt", "User-agent: *\nDisallow: /docs/1.2/guide/\n", "text/plain")
    result = crawl_site(server.url + "/docs/1.2/", FAST)
    assert not server.requests_to("/docs/1.2/guide/")
    assert result.report.counts["robots"] == 1
    assert "robots.txt" in result.report.skipped[server.url + "/docs/1.2/guide/"]


def test_a_failing_robots_txt_closes_the_site(server: DocsServer) -> None:
    built_site(server)
    server.routes["/robots.txt"] = lambda handler, query: handler.send_error(500)
    with pytest.raises(SourceError, match="HTTP 500.*closed"):
        crawl_site(server.url + "/docs/1.2/", FAST.with_overrides(retries=0))


def test_unreachable_start_url_is_a_clear_error() -> None:
    with pytest.raises(DownloadError, match="cannot reach http://127.0.0.1:9/docs/"):
        crawl_site("http://127.0.0.1:9/docs/", FAST)


def test_start_url_that_is_not_html_is_a_clear_error(server: DocsServer) -> None:
    server.files["/manual.pdf"] = ("application/pdf", b"%PDF-1.4")
    with pytest.raises(SourceError, match="is not an HTML page.*application/pdf"):
        crawl_site(server.url + "/manual.pdf", FAST)


def test_start_url_errors_and_bad_urls(server: DocsServer) -> None:
    with pytest.raises(DownloadError, match="HTTP 404"):
        crawl_site(server.url + "/missing/", FAST)
    with pytest.raises(ConfigurationError, match="not an http"):
        crawl_site("ftp://example.org/docs/", FAST)


def test_non_html_links_are_skipped_and_counted(server: DocsServer) -> None:
    server.page("/d/", html_page("Home", ("a", "x"), links=("data", "logo.png", "page.html")))
    server.files["/d/data"] = ("application/json", b"{}")
    server.page("/d/page.html", html_page("Page", ("b", "y")))
    result = crawl_site(server.url + "/d/", FAST)
    assert {p.doc_id for p in result.pages} == {"index.html", "page.html"}
    assert result.report.counts == {"not_html": 1}
    assert not server.requests_to("/d/logo.png")  # a file by its name: never requested


def test_canonical_copies_and_redirected_aliases_are_indexed_once(server: DocsServer) -> None:
    page = html_page("Guide", ("a", "x"))
    server.page("/d/", html_page("Home", ("h", "x"), links=("guide/", "guide/index.html",
                                                           "copy.html", "alias/")))  # fmt: skip
    server.page("/d/guide/", page)
    server.page("/d/guide/index.html", page)
    copy = page.replace("<head>", f'<head><link rel="canonical" href="{server.url}/d/guide/">')
    server.page("/d/copy.html", copy)
    server.routes["/d/alias/"] = lambda h, q: _redirect(h, "/d/guide/")
    result = crawl_site(server.url + "/d/", FAST)
    assert sorted(p.doc_id for p in result.pages) == ["guide/index.html", "index.html"]
    assert result.report.counts["duplicate"] == 3  # index.html, the canonical copy, the alias


def _redirect(handler: object, location: str, status: int = 301) -> None:
    from tests.sources.crawl_support import respond

    respond(handler, status, headers={"Location": location})  # type: ignore[arg-type]


def test_noindex_pages_are_followed_but_not_indexed(server: DocsServer) -> None:
    hidden = html_page("Search", ("s", "x"), links=("found.html",)).replace(
        "<head>", '<head><meta name="robots" content="noindex">'
    )
    server.page("/d/", html_page("Home", ("h", "x"), links=("search.html",)))
    server.page("/d/search.html", hidden)
    server.page("/d/found.html", html_page("Found", ("f", "x")))
    result = crawl_site(server.url + "/d/", FAST)
    assert sorted(p.doc_id for p in result.pages) == ["found.html", "index.html"]
    assert result.report.counts == {"noindex": 1}


def test_source_listings_and_refresh_stubs_are_followed_but_not_indexed(
    server: DocsServer,
) -> None:
    listing = html_page("Source code for pkg.api", ("c", "x"), links=("../../api.html",))
    listing = listing.replace(
        "</body>", '<a class="viewcode-back" href="../../api.html">[docs]</a></body>'
    )
    stub = '<html><head><meta http-equiv="refresh" content="0; url=\'moved.html\'"></head></html>'
    server.page("/d/", html_page("Home", ("h", "x"), links=("_modules/pkg/api.html", "old.html")))
    server.page("/d/_modules/pkg/api.html", listing)
    server.page("/d/api.html", html_page("API", ("a", "x")))
    server.page("/d/old.html", stub)
    server.page("/d/moved.html", html_page("Moved", ("m", "x")))
    result = crawl_site(server.url + "/d/", FAST)
    assert sorted(p.doc_id for p in result.pages) == ["api.html", "index.html", "moved.html"]
    assert result.report.counts == {"source_listing": 1, "redirect_stub": 1}


def test_exclude_patterns_leave_pages_unrequested(server: DocsServer) -> None:
    server.page("/d/", html_page("Home", ("h", "x"), links=("_modules/a/", "keep.html")))
    server.page("/d/_modules/a/", html_page("Source code for a", ("c", "x")))
    server.page("/d/keep.html", html_page("Keep", ("k", "x")))
    result = crawl_site(server.url + "/d/", FAST.with_overrides(exclude=("_modules/*",)))
    assert [p.doc_id for p in result.pages] == ["index.html", "keep.html"]
    assert not server.requests_to("/d/_modules/a/")
    assert result.report.counts == {"excluded": 1}


def test_crawl_limits_come_from_the_environment_and_are_checked() -> None:
    limits = CrawlLimits.from_env({"CITEWISE_CRAWL_MAX_PAGES": "7",
                                   "CITEWISE_CRAWL_EXCLUDE": "a/*, b/*"})  # fmt: skip
    assert limits.max_pages == 7 and limits.exclude == ("a/*", "b/*")
    with pytest.raises(ConfigurationError, match="CITEWISE_CRAWL_MAX_DEPTH must be an integer"):
        CrawlLimits.from_env({"CITEWISE_CRAWL_MAX_DEPTH": "deep"})
    with pytest.raises(ConfigurationError, match="max_pages .*CITEWISE_CRAWL_MAX_PAGES"):
        CrawlLimits(max_pages=0)


def test_a_start_url_redirecting_inside_the_host_sets_the_site_folder(server: DocsServer) -> None:
    from tests.sources.crawl_support import respond

    server.routes["/docs"] = lambda h, q: respond(h, 302, headers={"Location": "/docs/1.2/"})
    server.page("/docs/1.2/", html_page("Home", ("h", "x"), links=("../1.1/", "page.html")))
    server.page("/docs/1.2/page.html", html_page("Page", ("p", "x")))
    server.page("/docs/1.1/", html_page("Old", ("o", "x")))
    result = crawl_site(server.url + "/docs", FAST)
    assert result.site_url == server.url + "/docs/1.2/"
    assert [p.doc_id for p in result.pages] == ["index.html", "page.html"]
    assert not server.requests_to("/docs/1.1/")  # outside the folder the start resolved to


def test_a_start_url_redirecting_to_another_host_is_a_clear_error(server: DocsServer) -> None:
    from tests.sources.crawl_support import respond

    server.routes["/moved/"] = lambda h, q: respond(
        h, 301, headers={"Location": "https://docs.example.invalid/"}
    )
    with pytest.raises(SourceError, match="redirects off .* to https://docs.example.invalid/"):
        crawl_site(server.url + "/moved/", FAST)
