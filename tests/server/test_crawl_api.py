"""``POST /v1/knowledge-bases/{kb}/crawl``: a served site into a knowledge base, its bounds in
the report, and clear errors for a site that cannot be crawled."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.server.test_knowledge_api import api, error  # noqa: F401  (the API fixture)
from tests.sources.crawl_support import DocsServer, html_page


@pytest.fixture
def site() -> Iterator[DocsServer]:
    server = DocsServer()
    server.page("/d/", html_page("Home", ("keys", "Send the API key."), links=("logs.html",)))
    server.page("/d/logs.html", html_page("Logs", ("stderr", "Logs go to stderr.")))
    server.files["/d/manual.pdf"] = ("application/pdf", b"%PDF-1.4")
    yield server
    server.close()


def test_crawl_indexes_the_site_and_reports_its_bounds(
    api: httpx.Client,  # noqa: F811
    site: DocsServer,
) -> None:
    assert api.post("/v1/knowledge-bases", json={"name": "site"}).status_code == 201
    response = api.post("/v1/knowledge-bases/site/crawl",
                        json={"url": site.url + "/d/", "max_pages": 1})  # fmt: skip
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["object"] == "ingest_report" and body["added"] == ["index.html"]
    assert "max_pages" in body["limits"] and body["crawl"]["complete"] is False
    again = api.post("/v1/knowledge-bases/site/crawl", json={"url": site.url + "/d/"}).json()
    assert again["added"] == ["logs.html"] and again["unchanged"] == ["index.html"]
    hits = api.post("/v1/knowledge-bases/site/search", json={"query": "stderr logs"}).json()
    assert hits["data"][0]["url"] == site.url + "/d/logs.html#stderr"


def test_crawl_errors_are_clear(api: httpx.Client, site: DocsServer) -> None:  # noqa: F811
    assert api.post("/v1/knowledge-bases", json={"name": "site"}).status_code == 201
    unreachable = api.post("/v1/knowledge-bases/site/crawl", json={"url": "http://127.0.0.1:9/"})
    assert unreachable.status_code == 502 and "cannot reach" in error(unreachable)["message"]
    pdf = api.post("/v1/knowledge-bases/site/crawl", json={"url": site.url + "/d/manual.pdf"})
    assert pdf.status_code == 400 and "not an HTML page" in error(pdf)["message"]
    bad = api.post("/v1/knowledge-bases/site/crawl", json={"url": site.url, "max_pages": 0})
    assert bad.status_code == 400
    missing = api.post("/v1/knowledge-bases/nope/crawl", json={"url": site.url + "/d/"})
    assert missing.status_code == 404
