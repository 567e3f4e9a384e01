"""Hostile sites, each bounded by a named setting and reported: endless self-links, 10,000
links, a 50 MB page, a gzip bomb, redirect loops, off-site redirects, a trickling server,
rate limits and failing servers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from citewise.sources.crawl import crawl_site
from citewise.sources.crawl_limits import MIB, CrawlLimits
from tests.sources.crawl_support import (
    HTML,
    DocsServer,
    gzip_bomb,
    html_page,
    respond,
    streamed,
    trickle,
)

FAST = CrawlLimits(max_seconds=20, page_seconds=5, timeout=5, max_retry_wait=2,
                   max_page_bytes=1 * MIB, retry_backoff=0.1)  # fmt: skip


@pytest.fixture
def server() -> Iterator[DocsServer]:
    site = DocsServer()
    site.page("/d/ok.html", html_page("Fine", ("fine", "A normal page.")))
    yield site
    site.close()


def home(server: DocsServer, *links: str) -> str:
    server.page("/d/", html_page("Home", ("home", "Start here."), links=(*links, "ok.html")))
    return server.url + "/d/"


def test_a_page_linking_to_itself_with_endless_query_strings_is_fetched_once(
    server: DocsServer,
) -> None:
    def loop(handler: BaseHTTPRequestHandler, query: str) -> None:
        n = int(query.partition("=")[2] or 0)
        body = html_page("Loop", ("loop", "Again."), links=(f"loop.html?n={n + 1}",))
        respond(handler, 200, body.encode(), {"Content-Type": HTML})

    server.routes["/d/loop.html"] = loop
    result = crawl_site(home(server, "loop.html?n=0"), FAST)
    assert len(server.requests_to("/d/loop.html")) == 1
    assert {p.doc_id for p in result.pages} == {"index.html", "loop.html", "ok.html"}


def test_endless_new_paths_are_cut_by_the_page_bound(server: DocsServer) -> None:
    def deeper(handler: BaseHTTPRequestHandler, query: str) -> None:
        path = handler.path.rstrip("/")
        body = html_page("Deeper", ("d", "x"), links=(f"{path}/more/", f"{path}/other/"))
        respond(handler, 200, body.encode(), {"Content-Type": HTML})

    class Anything(dict[str, object]):
        def get(self, key: str, default: object = None) -> object:
            return deeper if key.startswith("/d/deep/") else super().get(key, default)

    server.routes = Anything()  # type: ignore[assignment]
    result = crawl_site(home(server, "deep/"), FAST.with_overrides(max_pages=30))
    assert len(server.log) <= 30 + 3  # the pages, robots.txt and two sitemap probes
    assert "max_pages" in result.report.limits
    assert "CITEWISE_CRAWL_MAX_PAGES" in result.report.limits["max_pages"]
    assert not result.report.complete


def test_a_page_with_10000_links_is_bounded_by_max_pages(server: DocsServer) -> None:
    links = tuple(f"p/{n}.html" for n in range(10_000))
    server.page("/d/many.html", html_page("Many", ("m", "x"), links=links))
    for n in range(10_000):
        server.page(f"/d/p/{n}.html", html_page(f"P{n}", ("p", "x")))
    started = time.monotonic()
    result = crawl_site(home(server, "many.html"), FAST.with_overrides(max_pages=40))
    assert result.report.requests <= 40 + 3
    assert (
        "10,000" in result.report.limits["max_pages"]
        or "more found" in result.report.limits["max_pages"]
    )
    assert time.monotonic() - started < 15


def test_a_50_mb_page_is_never_read_whole(server: DocsServer) -> None:
    chunk = b"<p>" + b"x" * (64 * 1024 - 7) + b"</p>\n"
    written = [0]

    def huge(handler: BaseHTTPRequestHandler, query: str) -> None:
        blocks = (chunk for _ in range(50 * MIB // len(chunk)))
        streamed(handler, blocks, {"Content-Type": HTML}, written)

    def declared(handler: BaseHTTPRequestHandler, query: str) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", HTML)
        handler.send_header("Content-Length", str(50 * MIB))
        handler.end_headers()
        handler.close_connection = True

    server.routes["/d/huge.html"] = huge
    server.routes["/d/declared.html"] = declared
    result = crawl_site(home(server, "huge.html", "declared.html"), FAST)
    skipped = result.report.skipped
    assert "max_page_bytes" in skipped[server.url + "/d/huge.html"]
    assert "max_page_bytes" in skipped[server.url + "/d/declared.html"]
    assert result.report.counts["max_page_bytes"] == 2
    assert "max_page_bytes" in result.report.limits
    assert {p.doc_id for p in result.pages} == {"index.html", "ok.html"}
    assert result.report.bytes < 2 * MIB
    assert 0 < written[0] < 20 * MIB  # the client hung up long before the end


def test_a_gzip_bomb_is_cut_at_the_decoded_cap(server: DocsServer) -> None:
    written = [0]

    def bomb(handler: BaseHTTPRequestHandler, query: str) -> None:
        # ~1 MB on the wire per GB inflated; generated lazily, stopped when the client goes.
        headers = {"Content-Type": HTML, "Content-Encoding": "gzip"}
        streamed(handler, gzip_bomb(1024 * MIB), headers, written)

    server.routes["/d/bomb.html"] = bomb
    started = time.monotonic()
    result = crawl_site(home(server, "bomb.html"), FAST)
    assert "max_page_bytes" in result.report.skipped[server.url + "/d/bomb.html"]
    assert {p.doc_id for p in result.pages} == {"index.html", "ok.html"}
    assert time.monotonic() - started < 15
    # The client stopped reading at its cap: a small part of the ~1 MB the bomb weighs.
    assert 0 < written[0] < 1024 * MIB // 1000


def test_gzip_pages_are_decoded(server: DocsServer) -> None:
    import gzip

    body = gzip.compress(html_page("Zipped", ("z", "Compressed text.")).encode())
    server.routes["/d/z.html"] = lambda h, q: respond(
        h, 200, body, {"Content-Type": HTML, "Content-Encoding": "gzip"}
    )
    result = crawl_site(home(server, "z.html"), FAST)
    page = next(p for p in result.pages if p.doc_id == "z.html")
    assert page.html is not None and "Compressed text." in page.html


def test_redirect_loops_and_off_site_redirects_are_refused_and_counted(
    server: DocsServer,
) -> None:
    def to(location: str) -> object:
        return lambda h, q: respond(h, 302, headers={"Location": location})

    server.routes.update({
        "/d/a.html": to("/d/b.html"), "/d/b.html": to("/d/a.html"),  # a loop
        "/d/hop.html": to("/d/hop.html?again"),  # a loop through the query string
        "/d/away.html": to("http://other.invalid/docs/"),  # another host
        "/d/up.html": to("/private/"),  # the same host, outside the start path
        "/d/moved.html": to("/d/ok.html"),  # inside: followed
    })  # type: ignore[dict-item]  # fmt: skip
    result = crawl_site(
        home(server, "a.html", "hop.html", "away.html", "up.html", "moved.html"), FAST
    )
    counts = result.report.counts
    assert counts["redirect_loop"] == 2
    assert counts["redirect_refused"] == 2
    assert (
        "off the start path to http://other.invalid/docs/"
        in result.report.skipped[server.url + "/d/away.html"]
    )
    assert not server.requests_to("/private/")
    assert {p.doc_id for p in result.pages} == {"index.html", "ok.html"}


def test_a_server_sending_one_byte_a_second_is_cut_by_the_page_deadline(
    server: DocsServer,
) -> None:
    slow = html_page("Slow", ("s", "x" * 200)).encode()
    server.routes["/d/slow.html"] = lambda h, q: streamed(
        h, trickle(slow, 0.5), {"Content-Type": HTML}
    )
    started = time.monotonic()
    result = crawl_site(home(server, "slow.html"), FAST.with_overrides(page_seconds=0.6))
    assert time.monotonic() - started < 8
    assert result.report.counts["page_seconds"] == 1
    assert "page_seconds" in result.report.skipped[server.url + "/d/slow.html"]
    assert "page_seconds" in result.report.limits


def test_the_wall_time_bound_stops_the_crawl(server: DocsServer) -> None:
    slow = html_page("Slow", ("s", "x" * 200)).encode()
    for n in range(6):
        server.routes[f"/d/slow{n}.html"] = lambda h, q: streamed(
            h, trickle(slow, 0.2), {"Content-Type": HTML}
        )
    started = time.monotonic()
    result = crawl_site(home(server, *(f"slow{n}.html" for n in range(6))),
                        FAST.with_overrides(max_seconds=1, page_seconds=60))  # fmt: skip
    assert time.monotonic() - started < 6
    assert "max_seconds" in result.report.limits
    assert "CITEWISE_CRAWL_MAX_SECONDS" in result.report.limits["max_seconds"]
    assert not result.report.complete


def test_the_total_bytes_bound_stops_the_crawl(server: DocsServer) -> None:
    big = html_page("Big", ("b", "y" * 200_000))
    for n in range(10):
        server.page(f"/d/big{n}.html", big)
    limits = FAST.with_overrides(max_total_bytes=500_000, concurrency=1)
    result = crawl_site(home(server, *(f"big{n}.html" for n in range(10))), limits)
    assert "max_total_bytes" in result.report.limits
    assert result.report.pages < 6


def test_429_with_retry_after_then_success(server: DocsServer) -> None:
    calls: list[float] = []

    def limited(handler: BaseHTTPRequestHandler, query: str) -> None:
        calls.append(time.monotonic())
        if len(calls) == 1:
            respond(handler, 429, headers={"Retry-After": "1"})
        else:
            respond(handler, 200, html_page("Later", ("l", "x")).encode(), {"Content-Type": HTML})

    server.routes["/d/limited.html"] = limited
    result = crawl_site(home(server, "limited.html"), FAST)
    assert "limited.html" in {p.doc_id for p in result.pages}
    assert len(calls) == 2 and calls[1] - calls[0] >= 0.9  # Retry-After was honoured
    assert result.report.retries == 1


def test_503_twice_then_success_backs_off(server: DocsServer) -> None:
    calls: list[float] = []

    def flaky(handler: BaseHTTPRequestHandler, query: str) -> None:
        calls.append(time.monotonic())
        if len(calls) <= 2:
            respond(handler, 503)
        else:
            respond(handler, 200, html_page("Back", ("b", "x")).encode(), {"Content-Type": HTML})

    server.routes["/d/flaky.html"] = flaky
    result = crawl_site(home(server, "flaky.html"), FAST)
    assert "flaky.html" in {p.doc_id for p in result.pages}
    assert len(calls) == 3
    assert calls[2] - calls[1] > calls[1] - calls[0]  # exponential backoff


def test_a_server_failing_for_good_is_skipped_after_its_retries(server: DocsServer) -> None:
    server.routes["/d/down.html"] = lambda h, q: respond(h, 503, headers={"Retry-After": "60"})
    started = time.monotonic()
    result = crawl_site(
        home(server, "down.html"), FAST.with_overrides(retries=2, max_retry_wait=0.2)
    )
    assert len(server.requests_to("/d/down.html")) == 3
    assert time.monotonic() - started < 5  # Retry-After 60 capped by max_retry_wait
    assert result.report.skipped[server.url + "/d/down.html"] == "HTTP 503"
    assert "down.html" in result.failed
