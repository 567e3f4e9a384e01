"""A tiny docs site for the widget and feedback tests: its Markdown indexed as knowledge base
``docs`` (citations link to the site), and its pages served by a real HTTP server on
another port, each section under its anchor, embedding the widget."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from citewise.config import Settings
from citewise.kb import KnowledgeBase

KB = "docs"
GUIDE = (
    "# Guide\n\n"
    "## Add API keys\n\n"
    "Set CITEWISE_API_KEYS to a comma-separated list of keys; every request then sends "
    "'Authorization: Bearer KEY'. Restart the server after changing the keys.\n\n"
    "## Tune the search\n\n"
    "The search fuses BM25 keywords with dense embeddings by reciprocal rank fusion.\n"
)
INDEX = "# Home\n\nThis documentation explains how to run the service and secure it.\n"
SECTION_ANCHOR = "add-api-keys"


def index_docs(home: Path, site_url: str, tmp: Path) -> KnowledgeBase:
    """Knowledge base ``docs`` in ``home``, its pages published at ``site_url``."""
    folder = tmp / "docs-src"
    folder.mkdir(exist_ok=True)
    (folder / "index.md").write_text(INDEX)
    (folder / "guide.md").write_text(GUIDE)
    kb = KnowledgeBase(KB, settings=Settings(home=home))
    kb.index_folder(folder, site_url=site_url)
    return kb


def write_pages(root: Path, script_tag: str) -> None:
    """The site's HTML pages under ``root``: ``/`` and ``/guide/`` with its sections'
    anchors, each embedding ``script_tag``."""
    filler = "".join(f"<p>Filler paragraph {n} to scroll past.</p>" for n in range(60))
    pages = {
        "index.html": f"<h1>Home</h1><p>{INDEX.splitlines()[2]}</p>",
        "guide/index.html": (
            f'<h1>Guide</h1>{filler}<h2 id="{SECTION_ANCHOR}">Add API keys</h2>'
            f"<p>Set CITEWISE_API_KEYS.</p>{filler}"
            '<h2 id="tune-the-search">Tune the search</h2><p>BM25 and embeddings.</p>'
        ),
    }
    (root / "favicon.ico").write_bytes(b"")  # browsers ask: no 404 in the console
    for name, body in pages.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>Docs</title></head><body>{body}{script_tag}</body></html>"
        )


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """Serve the folder ``root`` on a free localhost port; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
