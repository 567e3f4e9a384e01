"""End to end: a site built by Sphinx itself, served over HTTP on 127.0.0.1, crawled into a
knowledge base: every section URL citewise records is an id on the served page, and the
site's headings are indexed."""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from citewise.sources.crawl_limits import CrawlLimits
from tests.retrieval.test_hybrid import HashEmbedder

PAGES = {
    "index.rst": """Widgets
=======

Widgets turn requests into answers.

.. toctree::

   guide/install
   guide/configure
   api

Overview
--------

What widgets are for.
""",
    "guide/install.rst": """Installation
============

Install with pip.

From source
-----------

Clone the repository.

Upgrading
---------

Upgrade with ``pip install -U widgets``.
""",
    "guide/configure.rst": """Configuration
=============

.. _env-vars:

Environment variables
---------------------

Set ``WIDGET_KEY``.

Files
-----

A ``widgets.toml`` file.

Precedence
~~~~~~~~~~

The environment wins.
""",
    "api.rst": """API
===

.. py:module:: widgets

.. py:class:: Client(key)

   A client.

   .. py:method:: send(request)

      Send one request.

.. py:function:: connect(url, timeout=10)

   Open a connection.
""",
}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sphinx", reason="the Sphinx build needs sphinx (the dev extra)")
    source = tmp_path_factory.mktemp("sphinx-src")
    (source / "conf.py").write_text("project = 'Widgets'\nextensions = []\n")
    for name, text in PAGES.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    out = tmp_path_factory.mktemp("sphinx-out") / "html"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "dirhtml", str(source), str(out),
         "-d", str(out.parent / "doctrees")],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"sphinx-build could not run: {done.stderr[-500:]}")
    return out


@pytest.fixture(scope="module")
def served(built: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(built))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def page_ids(built: Path, page: str) -> set[str]:
    from bs4 import BeautifulSoup

    html = (built / page / "index.html").read_text(encoding="utf-8")
    return {str(tag["id"]) for tag in BeautifulSoup(html, "html.parser").find_all(id=True)}


def site_headings(built: Path) -> set[str]:
    """Every heading of the built content pages as ``page#id`` (the page's first: ``page``)."""
    from bs4 import BeautifulSoup

    found: set[str] = set()
    for html in built.rglob("index.html"):
        relative = html.parent.relative_to(built).as_posix()
        page = "" if relative == "." else f"{relative}/"
        if page.startswith(("_", "genindex", "search", "py-modindex")):
            continue
        soup = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
        sections = [str(s["id"]) for s in soup.find_all("section", id=True)]
        found.add(page)
        found.update(f"{page}#{anchor}" for anchor in sections[1:])
    return found


def test_a_sphinx_site_crawled_cites_only_ids_of_its_pages(
    built: Path, served: str, tmp_path: Path
) -> None:
    embedder = HashEmbedder()  # what is checked is where citations point, not ranking
    kb = KnowledgeBase("widgets", settings=Settings(home=tmp_path / "home"), embedder=embedder)
    report = kb.index_url(served, limits=CrawlLimits(max_seconds=60, timeout=5))
    assert report.crawl["complete"] and not report.limits
    urls = {chunk.url for chunk in kb.store.get(sorted(kb.store.chunk_ids()))}
    assert all(url.startswith(served) for url in urls)
    recorded = {url[len(served) :] for url in urls}
    assert recorded
    broken = []
    for entry in recorded:
        page, _, anchor = entry.partition("#")
        if anchor and anchor not in page_ids(built, page):
            broken.append(entry)
    assert broken == []  # 100%: every section URL is an id on its served page
    headings = site_headings(built)
    missed = headings - recorded
    assert len(missed) <= 0.02 * len(headings), sorted(missed)
