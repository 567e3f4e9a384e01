"""A tiny real site built with Sphinx: every section URL parse_html gives is an id of its page."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from citewise.models import Chunk
from citewise.parsing.html import page_ids, parse_html
from citewise.retrieval.apiunits import api_unit

SOURCES = {
    "conf.py": "project = 'Tiny'\nextensions = ['sphinx.ext.autodoc']\nhtml_theme = 'alabaster'\n",
    "index.rst": """
        Tiny
        ====

        Intro text with a :ref:`link <usage>`.

        .. toctree::
           :caption: Guide

           guide/usage
           api
        """,
    "guide/usage.rst": """
        .. _usage:

        Usage
        =====

        Install it::

            pip install tiny

        .. note:: Read the API too.

        Configuration
        -------------

        term
           Its definition.

        .. rubric:: A rubric without an id of its own
        """,
    "api.rst": """
        API
        ===

        .. module:: tiny

        .. class:: Client(url, *, timeout=5.0)

           A client.

           .. method:: get(path)

              Fetch a path.

           .. attribute:: url

              Where it points.

        .. function:: connect(url)

           Connect to a server.

        .. exception:: TinyError

           Something failed.
        """,
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sphinx", reason="the Sphinx build needs sphinx (the dev extra)")
    root = tmp_path_factory.mktemp("tiny")
    source = root / "source"
    for name, text in SOURCES.items():
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    out = root / "html"
    # In a process of its own: Sphinx registers its directives and roles in docutils'
    # global registry, which the later reST and MyST parsing in this process would meet.
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-E", "-b", "html", str(source), str(out),
         "-d", str(root / "doctrees")],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return out


def test_every_section_url_is_an_id_of_its_page(built: Path) -> None:
    base = "https://tiny.example/en/latest/"
    total = anchored = 0
    titles: list[str] = []
    for name in ("index.html", "guide/usage.html", "api.html"):
        html = (built / name).read_text(encoding="utf-8")
        ids = page_ids(BeautifulSoup(html, "html.parser"))
        sections = parse_html(html, doc_id=name, site_url=base, version=None)
        assert sections, name
        for section in sections:
            total += 1
            page, _, anchor = section.url.partition("#")
            assert page == base + name.removesuffix("index.html")
            if anchor:
                anchored += 1
                assert anchor in ids, section.url
            titles.append(section.title)
    assert anchored == 7 and total == 10
    for expected in ("Usage", "Configuration", "class tiny.Client", "get()", "attribute url",
                     "tiny.connect()", "exception tiny.TinyError"):  # fmt: skip
        assert expected in titles


def test_api_entries_of_a_built_sphinx_page_are_api_units(built: Path) -> None:
    html = (built / "api.html").read_text(encoding="utf-8")
    sections = parse_html(html, doc_id="api.html", site_url="https://t.example/", version=None)
    units = {}
    for s in sections:
        chunk = Chunk(chunk_id="c", doc_id=s.doc_id, position=0, section_index=0, text=s.text,
                      title=s.title, heading_path=s.heading_path, anchor=s.anchor, url=s.url,
                      page=s.page)  # fmt: skip
        unit = api_unit(chunk)
        if unit is not None:
            units[unit.object_id] = unit.kind
    assert units == {
        "tiny.Client": "class", "tiny.Client.get": "function", "tiny.Client.url": "attribute",
        "tiny.connect": "function", "tiny.TinyError": "class",
    }  # fmt: skip
    usage = parse_html(
        (built / "guide/usage.html").read_text(encoding="utf-8"),
        doc_id="guide/usage.html",
        site_url="https://t.example/",
        version=None,
    )
    text = "\n".join(s.text for s in usage)
    assert "Note: Read the API too." in text
    assert "pip install tiny" in text
    assert "term\n: Its definition." in text
