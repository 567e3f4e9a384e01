"""Deeply nested HTML parses without RecursionError, in time linear in its size (issue 26
item 4): the walk keeps its own stack, and no step searches a subtree per element."""

from __future__ import annotations

import time

import pytest
from bs4 import BeautifulSoup

from citewise.parsing.html import parse_html


def timed_parse(html: str) -> tuple[list[str], str, float]:
    """Titles, text and seconds of parse_html, in units of building the same tree with bs4
    alone (a ratio, so the bound holds on a loaded machine too)."""
    started = time.perf_counter()
    BeautifulSoup(html, "html.parser")
    tree = time.perf_counter() - started
    started = time.perf_counter()
    sections = parse_html(html, doc_id="deep.html", site_url="https://x.example/", version=None)
    ratio = (time.perf_counter() - started) / tree
    return [s.title for s in sections], "\n".join(s.text for s in sections), ratio


@pytest.mark.parametrize("tag", ["div", "span", "section", "blockquote", "li", "a", "table"])
def test_2000_nested_elements_parse(tag: str) -> None:
    depth = 2_000
    html = f"<h1 id='top'>Deep</h1>{f'<{tag}>' * depth}<p>bottom text</p>{f'</{tag}>' * depth}"
    titles, text, _ = timed_parse(html)
    assert titles == ["Deep"]
    assert "bottom text" in text


@pytest.mark.parametrize("tag", ["div", "span"])
def test_20000_nested_elements_parse_in_linear_time(tag: str) -> None:
    depth = 20_000
    html = f"<h1 id='top'>Deep</h1>{f'<{tag}>' * depth}<p>bottom text</p>{f'</{tag}>' * depth}"
    titles, text, ratio = timed_parse(html)
    assert titles == ["Deep"]
    assert "bottom text" in text
    # Measured ~2-3x the tree build (100,000 divs: 71.8 s against 23.5 s on a loaded machine).
    assert ratio < 8, ratio


def test_deep_lists_tables_and_links_keep_their_text() -> None:
    depth = 3_000
    lists = "<ul><li>item" * depth + "</li></ul>" * depth
    tables = "<table><tr><td>cell" * 300 + "</td></tr></table>" * 300
    links = "<a href='#top'>" * depth + "link" + "</a>" * depth
    html = f"<h1 id='top'>T</h1>{lists}<h2 id='t'>Tables</h2>{tables}<p>{links}</p>"
    titles, text, _ = timed_parse(html)
    assert titles == ["T", "Tables"]
    assert text.count("- item") == depth
    assert "cell" in text and "link" in text
