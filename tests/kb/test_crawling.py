"""A crawled site as a knowledge base: citations resolve on the served pages, a re-crawl of an
unchanged site is conditional requests only and embeds nothing, changes and removals follow
the site, and a failing crawl or ingest leaves the knowledge base as it was."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.embedding.base import Embedder
from citewise.errors import EmbeddingError, KnowledgeBaseError
from citewise.kb import KnowledgeBase
from citewise.kb.crawling import crawl_state_path
from citewise.sources.crawl_limits import CrawlLimits
from tests.kb.test_ingest import CountingEmbedder
from tests.retrieval.test_hybrid import HashEmbedder
from tests.sources.crawl_support import DocsServer, html_page

FAST = CrawlLimits(max_seconds=30, page_seconds=10, timeout=5, max_retry_wait=1)
BASE = "/docs/1.2/"


@pytest.fixture
def server() -> Iterator[DocsServer]:
    site = DocsServer()
    site.page(BASE, html_page("Widgets", ("overview", "Widgets turn requests into answers."),
                              links=("guide/", "api.html")))  # fmt: skip
    site.page(BASE + "guide/", html_page(
        "Guide", ("install", "Install the widget with pip install widgets."),
        ("configure", "Set WIDGET_KEY in the environment to authenticate."),
        links=("../", "../old.html"),
    ))  # fmt: skip
    site.page(BASE + "api.html", html_page("API", ("widgets-client", "The Client class.")))
    site.page(BASE + "old.html", html_page("Old", ("legacy", "The legacy widget protocol.")))
    yield site
    site.close()


@pytest.fixture
def embedder() -> CountingEmbedder:
    # Citations and embed counts are what is tested here, not retrieval quality.
    return CountingEmbedder(HashEmbedder())


def make_kb(tmp_path: Path, embedder: Embedder, name: str = "site") -> KnowledgeBase:
    return KnowledgeBase(name, settings=Settings(home=tmp_path / "home"), embedder=embedder)


def test_every_section_url_is_the_fetched_page_url_plus_an_id_it_carries(
    server: DocsServer, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    kb = make_kb(tmp_path, embedder)
    report = kb.index_url(server.url + BASE, limits=FAST)
    assert sorted(report.added) == ["api.html", "guide/index.html", "index.html", "old.html"]
    urls = {chunk.url for chunk in kb.store.get(sorted(kb.store.chunk_ids()))}
    fetched = {seen.path.partition("?")[0] for seen in server.log}
    for url in urls:
        page, _, anchor = url.partition("#")
        assert page.startswith(server.url + BASE)
        assert page[len(server.url) :] in fetched  # the URL a citation opens was fetched
        if anchor:
            body = server.files[page[len(server.url) :]][1].decode()
            assert re.search(rf'id="{re.escape(anchor)}"', body), url
    assert server.url + BASE + "guide/#configure" in urls
    assert kb.meta()["site_url"] == server.url + BASE


def test_recrawling_an_unchanged_site_is_conditional_and_embeds_nothing(
    server: DocsServer, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    kb = make_kb(tmp_path, embedder)
    kb.index_url(server.url + BASE, limits=FAST)
    assert embedder.passages > 0
    embedder.passages = 0
    first = len(server.log)
    report = kb.index_url(server.url + BASE, limits=FAST)
    again = server.log[first:]
    existing = [seen for seen in again if seen.path.partition("?")[0] in server.files]
    assert existing and all(seen.conditional for seen in existing)
    assert sum(server.sent.values()) == sum(
        len(body) for path, (_, body) in server.files.items() if path.endswith((".html", "/"))
    )  # every page's body was sent once, by the first crawl only
    assert embedder.passages == 0 and report.chunks_embedded == 0
    assert sorted(report.unchanged) == ["api.html", "guide/index.html", "index.html", "old.html"]
    assert report.crawl["not_modified"] == 4


def test_a_changed_page_is_reembedded_alone_and_gone_pages_leave(
    server: DocsServer, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    kb = make_kb(tmp_path, embedder)
    kb.index_url(server.url + BASE, limits=FAST)
    server.page(BASE + "api.html", html_page("API", ("widgets-client", "The Client class."),
                                             ("retries", "Retries back off.")))  # fmt: skip
    del server.files[BASE + "old.html"]  # 404 now
    embedder.passages = 0
    report = kb.index_url(server.url + BASE, limits=FAST)
    assert report.updated == ["api.html"] and report.removed == ["old.html"]
    assert 0 < report.chunks_embedded <= 2
    # No longer linked from anywhere (still served): gone from the site too.
    server.page(BASE + "guide/", html_page("Guide", ("install", "pip install widgets."),
                                           links=("../",)))  # fmt: skip
    server.page(BASE + "old.html", html_page("Old", ("legacy", "Still served.")))
    report = kb.index_url(server.url + BASE, limits=FAST)
    assert "old.html" not in {d.doc_id for d in kb.documents()}
    assert report.updated == ["guide/index.html"]


def test_a_crawl_cut_short_by_a_bound_keeps_the_pages_it_did_not_reach(
    server: DocsServer, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    kb = make_kb(tmp_path, embedder)
    kb.index_url(server.url + BASE, limits=FAST)
    report = kb.index_url(server.url + BASE, limits=FAST.with_overrides(max_pages=2))
    assert "max_pages" in report.limits and not report.removed
    assert len(kb.documents()) == 4
    assert "limit hit:" in report.summary() and "max_pages" in report.summary()


def test_a_page_failing_this_time_is_kept(
    server: DocsServer, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    from tests.sources.crawl_support import respond

    kb = make_kb(tmp_path, embedder)
    kb.index_url(server.url + BASE, limits=FAST)
    server.routes[BASE + "api.html"] = lambda h, q: respond(h, 503)
    report = kb.index_url(server.url + BASE, limits=FAST.with_overrides(retries=0))
    assert report.removed == [] and "api.html" in {d.doc_id for d in kb.documents()}
    assert report.skipped[server.url + BASE + "api.html"] == "HTTP 503"


def test_a_failed_ingest_leaves_the_knowledge_base_and_its_crawl_state_as_they_were(
    server: DocsServer, tmp_path: Path
) -> None:
    kb = make_kb(tmp_path, CountingEmbedder(HashEmbedder()))
    kb.index_url(server.url + BASE, limits=FAST)
    state = crawl_state_path(kb).read_bytes()
    before = {d.doc_id: d.content_hash for d in kb.documents()}
    server.page(BASE + "api.html", html_page("API", ("boom", "EXPLODE here.")))
    failing = make_kb(tmp_path, CountingEmbedder(HashEmbedder(), fail_on="EXPLODE"))
    with pytest.raises(EmbeddingError):
        failing.index_url(server.url + BASE, limits=FAST)
    assert {d.doc_id: d.content_hash for d in kb.documents()} == before
    assert crawl_state_path(kb).read_bytes() == state


def test_another_site_into_the_same_knowledge_base_is_refused_unless_replaced(
    server: DocsServer, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    server.page("/other/", html_page("Other", ("o", "Another site.")))
    kb = make_kb(tmp_path, embedder)
    kb.index_url(server.url + BASE, limits=FAST)
    with pytest.raises(KnowledgeBaseError, match="was indexed from .*/docs/1.2/"):
        kb.index_url(server.url + "/other/", limits=FAST)
    report = kb.index_url(server.url + "/other/", limits=FAST, replace=True)
    assert report.updated == ["index.html"] and len(report.removed) == 3
    assert [d.url for d in kb.documents()] == [server.url + "/other/"]


def test_a_lost_crawl_state_costs_downloads_not_correctness(
    server: DocsServer, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    kb = make_kb(tmp_path, embedder)
    kb.index_url(server.url + BASE, limits=FAST)
    crawl_state_path(kb).unlink()
    embedder.passages = 0
    report = kb.index_url(server.url + BASE, limits=FAST)
    assert len(report.unchanged) == 4 and embedder.passages == 0  # same bytes: same pages


def test_a_page_over_a_parse_limit_is_skipped_alone(
    server: DocsServer,
    tmp_path: Path,
    embedder: CountingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CITEWISE_MAX_SECTIONS", "2")
    kb = make_kb(tmp_path, embedder)
    report = kb.index_url(server.url + BASE, limits=FAST)
    assert "CITEWISE_MAX_SECTIONS" in report.skipped[server.url + BASE + "guide/"]
    assert sorted(report.added) == ["api.html", "index.html", "old.html"]


def test_rebuild_fetches_and_embeds_every_page_again(
    server: DocsServer, tmp_path: Path, embedder: CountingEmbedder
) -> None:
    kb = make_kb(tmp_path, embedder)
    kb.index_url(server.url + BASE, limits=FAST)
    first = len(server.log)
    report = kb.index_url(server.url + BASE, limits=FAST, rebuild=True)
    again = [seen for seen in server.log[first:] if seen.path.endswith((".html", "/"))]
    assert again and not any(seen.conditional for seen in again)
    assert len(report.added) == 4 and report.chunks_embedded == report.chunks
