"""End to end: a site built by MkDocs with the Material theme, served over HTTP on 127.0.0.1,
crawled into a knowledge base: every section URL is an id on its served page, the site's
headings are indexed, and the theme's chrome (navigation, TOC, footer) stays out."""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from citewise.sources.crawl_limits import CrawlLimits
from tests.kb.test_crawling_sphinx import _Quiet
from tests.retrieval.test_hybrid import HashEmbedder

CONFIG = """site_name: Gadgets
theme:
  name: material
markdown_extensions:
  - admonition
  - toc:
      permalink: true
  - pymdownx.highlight
  - pymdownx.superfences
nav:
  - Home: index.md
  - Guide:
      - Install: guide/install.md
      - Configure: guide/configure.md
"""

PAGES = {
    "index.md": "# Gadgets\n\nGadgets turn widgets into answers.\n\n## Why gadgets\n\nSpeed.\n",
    "guide/install.md": """# Installation

Install the package.

## With pip

```bash
pip install gadgets
```

!!! warning "Python version"
    Gadgets needs Python 3.11 or newer.

## From source

Clone the repository.

### Editable installs

Use `pip install -e .`.
""",
    "guide/configure.md": """# Configuration

## Environment variables

| Variable | Default |
| --- | --- |
| `GADGET_KEY` | none |
| `GADGET_PORT` | `8000` |

## Files {#config-files}

A `gadgets.toml` file.
""",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("material", reason="the MkDocs build needs mkdocs-material (dev extra)")
    source = tmp_path_factory.mktemp("mkdocs-src")
    (source / "mkdocs.yml").write_text(CONFIG.replace("- toc:", "- attr_list\n  - toc:"))
    for name, text in PAGES.items():
        path = source / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    out = tmp_path_factory.mktemp("mkdocs-out") / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(source / "mkdocs.yml"),
         "-d", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"mkdocs build could not run: {done.stderr[-500:]}")
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


def content_headings(built: Path) -> dict[str, set[str]]:
    """Each content page (``guide/install/``) with the ids of the headings in its article."""
    from bs4 import BeautifulSoup

    found: dict[str, set[str]] = {}
    for html in built.rglob("index.html"):
        relative = html.parent.relative_to(built).as_posix()
        page = "" if relative == "." else f"{relative}/"
        article = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser").find("article")
        if page.startswith(("search", "assets")) or article is None:
            continue
        headings = article.find_all(("h1", "h2", "h3", "h4", "h5", "h6"))
        found[page] = {str(h["id"]) for h in headings[1:] if h.get("id")}
    return found


def test_a_material_site_crawled_cites_only_ids_of_its_pages(
    built: Path, served: str, tmp_path: Path
) -> None:
    from bs4 import BeautifulSoup

    kb = KnowledgeBase(
        "gadgets", settings=Settings(home=tmp_path / "home"), embedder=HashEmbedder()
    )
    report = kb.index_url(served, limits=CrawlLimits(max_seconds=60, timeout=5))
    assert report.crawl["complete"] and not report.limits
    chunks = kb.store.get(sorted(kb.store.chunk_ids()))
    recorded = {chunk.url[len(served) :] for chunk in chunks}
    assert all(chunk.url.startswith(served) for chunk in chunks)
    broken = []
    for entry in recorded:
        page, _, anchor = entry.partition("#")
        html = (built / page / "index.html").read_text(encoding="utf-8")
        ids = {str(t["id"]) for t in BeautifulSoup(html, "html.parser").find_all(id=True)}
        if anchor and anchor not in ids:
            broken.append(entry)
    assert broken == []  # 100%: every section URL is an id on its served page
    expected = {f"{page}#{i}" for page, ids in content_headings(built).items() for i in ids}
    expected |= set(content_headings(built))
    assert expected >= {"guide/configure/#config-files", "guide/install/#editable-installs"}
    missed = expected - recorded
    assert len(missed) <= 0.02 * len(expected), sorted(missed)
    scopes = {c.url[len(served) :].split("/")[0]: c.scope for c in chunks}
    assert scopes["guide"] == "guide" != scopes[""]  # the nav's "Guide" section is a scope
    text = "\n".join(chunk.text for chunk in chunks)
    assert "pip install gadgets" in text and "Python 3.11 or newer" in text
    assert "| `GADGET_PORT` | `8000` |" in text.replace("\\", "")
    assert "Made with" not in text and "Table of contents" not in text  # chrome dropped
