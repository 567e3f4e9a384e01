"""``citewise index --url``: a served site crawled from the command line, bounds as flags."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.support import fail, run, run_json
from tests.sources.crawl_support import DocsServer, html_page


@pytest.fixture
def site() -> Iterator[DocsServer]:
    server = DocsServer()
    server.page("/d/", html_page("Home", ("keys", "Send the API key."), links=("a/", "b.html")))
    server.page("/d/a/", html_page("A", ("alpha", "First page.")))
    server.page("/d/b.html", html_page("B", ("beta", "Second page.")))
    yield server
    server.close()


def test_index_url_crawls_and_reports(
    home: Path, site: DocsServer, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run_json(capsys, "index", "--url", site.url + "/d/", "--kb", "site", "--json",
                      "--max-pages", "2")  # fmt: skip
    assert sorted(report["added"]) == ["a/index.html", "index.html"]
    assert "--max-pages" not in report["limits"]["max_pages"]
    assert "CITEWISE_CRAWL_MAX_PAGES" in report["limits"]["max_pages"]
    out = run(capsys, "index", "--url", site.url + "/d/", "--kb", "site")
    assert "3 pages (1 added" in out and "not modified" in out
    listed = run(capsys, "search", "--kb", "site", "second page")
    assert site.url + "/d/b.html" in listed


def test_index_url_errors_are_one_line(
    home: Path, site: DocsServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "cannot reach" in fail(capsys, "index", "--url", "http://127.0.0.1:9/", "--kb", "x")
    assert "without FOLDER" in fail(capsys, "index", "docs", "--url", site.url + "/d/")
    assert "--site-url" in fail(
        capsys, "index", "--url", site.url + "/d/", "--site-url", "https://x.org/"
    )
