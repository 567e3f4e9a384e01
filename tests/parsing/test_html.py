"""HTML pages: boilerplate removed, sections at headings, anchors, and light Markdown text."""

from __future__ import annotations

from citewise.chunking import chunk_sections
from citewise.models import Section
from citewise.parsing.base import parser_for
from citewise.parsing.html import HTMLParser, parse_html

SITE = "https://docs.example/"
BASE = f"{SITE}2.0/guide/install.html"

PAGE = """<!DOCTYPE html>
<html><head><title>Install - Widget Docs</title>
<style>.x { color: red }</style><script>var tracking = "SCRIPTTEXT";</script></head>
<body>
<header class="site"><a href="/">SITEHEADER</a></header>
<nav class="sidebar"><ul><li><a href="other.html">NAVLINK</a></li></ul></nav>
<div role="navigation">ROLENAV</div>
<div class="banner">OUTSIDEMAIN</div>
<main>
  <h1 id="install">Install <a class="headerlink" href="#install" title="Permanent link">¶</a></h1>
  <p>Install the <strong>widget</strong> with <code>pip install widget</code>.
     Read <a href="../guide/auth.html#keys">the auth guide</a>,
     <a href="#upgrading">upgrading</a> and <a href="https://pypi.org/">PyPI</a>.</p>
  <div class="language-python highlight"><pre><span></span><code>import widget
widget.run(&quot;x&quot;)
</code></pre></div>
  <form><input name="q"><button>SEARCHBUTTON</button></form>
  <aside>ASIDETEXT</aside>
  <noscript>NOSCRIPTTEXT</noscript>
  <section id="upgrading">
    <h2>Upgrading</h2>
    <ul>
      <li>Back up first</li>
      <li>Then run <code>pip install -U widget</code>
        <ol><li>check the version</li></ol>
      </li>
    </ul>
    <table>
      <thead><tr><th>Version</th><th>Notes</th></tr></thead>
      <tbody>
        <tr><td>1.0</td><td>first | release</td></tr>
        <tr><td>2.0</td><td><p>new</p><p>API</p></td></tr>
      </tbody>
    </table>
  </section>
  <h3>Rollback</h3>
  <p>Pin the old version.<br>Then reinstall.</p>
  <h2 id="custom-id">Troubleshooting</h2>
  <p>Ask for help.</p>
  <h2>Upgrading</h2>
  <p>Same title again.</p>
  <h2>custom id</h2>
  <footer>MAINFOOTER</footer>
</main>
<footer>PAGEFOOTER</footer>
</body></html>
"""


def parse(
    html: str, doc_id: str = "guide/install.html", version: str | None = "2.0"
) -> list[Section]:
    return parse_html(html, doc_id=doc_id, site_url=SITE, version=version)


def test_boilerplate_is_removed_and_only_main_is_read() -> None:
    text = "\n".join(s.text + " ".join(s.heading_path) for s in parse(PAGE))
    for gone in (
        "SCRIPTTEXT",
        "SITEHEADER",
        "NAVLINK",
        "ROLENAV",
        "OUTSIDEMAIN",
        "SEARCHBUTTON",
        "ASIDETEXT",
        "NOSCRIPTTEXT",
        "MAINFOOTER",
        "PAGEFOOTER",
        "color: red",
    ):
        assert gone not in text, gone
    assert "Install the widget" in text


def test_sections_follow_headings_with_paths_and_anchors() -> None:
    sections = parse(PAGE)
    assert [(s.title, s.heading_path, s.level, s.anchor) for s in sections] == [
        ("Install", ("Install",), 1, ""),
        ("Upgrading", ("Install", "Upgrading"), 2, "upgrading"),
        # No id of its own: the nearest id before it on the page, never an invented slug.
        ("Rollback", ("Install", "Upgrading", "Rollback"), 3, "upgrading"),
        ("Troubleshooting", ("Install", "Troubleshooting"), 2, "custom-id"),
        ("Upgrading", ("Install", "Upgrading"), 2, "custom-id"),
        ("custom id", ("Install", "custom id"), 2, "custom-id"),
    ]
    assert sections[0].url == BASE
    assert sections[1].url == f"{BASE}#upgrading"
    assert {s.page for s in sections} == {"guide/install.html"}
    assert all(s.doc_id == "guide/install.html" for s in sections)


def test_text_is_light_markdown() -> None:
    install, upgrading, rollback = parse(PAGE)[:3]
    assert install.text == (
        "Install the widget with `pip install widget`. Read "
        f"[the auth guide]({SITE}2.0/guide/auth.html#keys), "
        f"[upgrading]({BASE}#upgrading) and [PyPI](https://pypi.org/).\n\n"
        '```python\nimport widget\nwidget.run("x")\n```'
    )
    assert upgrading.text == (
        "- Back up first\n"
        "- Then run `pip install -U widget`\n"
        "  - check the version\n\n"
        "| Version | Notes |\n"
        "| --- | --- |\n"
        "| 1.0 | first \\| release |\n"
        "| 2.0 | new API |"
    )
    assert rollback.text == "Pin the old version.\nThen reinstall."


def test_anchor_sources_permalink_sphinx_section_and_old_style_names() -> None:
    html = """<body><div role="main">
    <section id="quick-start"><h1>Quick start<a class="headerlink" href="#quick-start">¶</a></h1>
      <p>Intro.</p>
      <section id="the-api"><h2>API <a class="headerlink" href="#the-api">¶</a></h2><p>a</p>
      </section>
    </section>
    <h2><a href="#perma">#</a>Permalinked</h2><p id="perma">b</p>
    <h2><a href="#nowhere">#</a>Dangling</h2><p>b2</p>
    <h2><a name="legacy"></a>Legacy</h2><p>c</p>
    <h2>Plain <em>text</em></h2><p>d</p>
    </div></body>"""
    sections = parse(html)
    assert [(s.title, s.anchor) for s in sections] == [
        ("Quick start", ""),
        ("API", "the-api"),
        ("Permalinked", "perma"),
        # Its permalink targets no id on the page: the nearest id before it instead.
        ("Dangling", "perma"),
        ("Legacy", "legacy"),
        ("Plain text", "legacy"),  # no id of its own: the one before it
    ]


def test_single_article_is_the_content_and_keeps_its_header_title() -> None:
    html = """<body><header><h1>Site name</h1></header>
    <article><header><h1>Release notes</h1><p>March 2024</p></header>
    <p>All changes.</p></article>
    <footer>Copyright</footer></body>"""
    sections = parse(html, doc_id="news.html")
    assert [(s.title, s.text) for s in sections] == [
        ("Release notes", "March 2024\n\nAll changes.")
    ]


def test_without_main_the_page_header_and_footer_go() -> None:
    html = """<body><header><h1>Site name</h1><p>tagline</p></header>
    <h1>Guide</h1><p>Body text.</p><footer>Copyright</footer></body>"""
    sections = parse(html, doc_id="guide.html")
    assert [(s.title, s.text) for s in sections] == [("Guide", "Body text.")]


def test_text_before_any_heading_is_titled_from_the_title_tag() -> None:
    html = "<html><head><title>Changelog</title></head><body><p>Fixes.</p><h2>1.0</h2>x</body>"
    sections = parse(html, doc_id="changes.html", version=None)
    assert [(s.title, s.heading_path, s.anchor, s.url) for s in sections] == [
        ("Changelog", ("Changelog",), "", f"{SITE}changes.html"),
        # No id on the page before it: the bare page URL, not a slug the page lacks.
        ("1.0", ("Changelog", "1.0"), "", f"{SITE}changes.html"),
    ]


def test_index_html_is_served_as_its_folder_and_fragments_work() -> None:
    sections = parse("<h1>Guide</h1><p>Hi</p>", doc_id="guide/index.html")
    assert sections[0].url == f"{SITE}2.0/guide/"
    assert sections[0].page == "guide/"
    assert parse("", doc_id="empty.html") == []
    assert parse("<p>no headings</p>", doc_id="notes/a_b.htm")[0].title == "A b"


def test_base_href_resolves_links_and_script_links_stay_text() -> None:
    html = """<head><base href="https://cdn.example/docs/"></head>
    <body><h1>T</h1><p><a href="x.html">X</a> <a href="javascript:void(0)">JS</a></p></body>"""
    assert parse(html)[0].text == "[X](https://cdn.example/docs/x.html) JS"


def test_code_fences_outgrow_backticks_in_the_code() -> None:
    html = "<h1>T</h1><pre>use ``` fences</pre><p><code>a`b</code></p>"
    assert parse(html)[0].text == "````\nuse ``` fences\n````\n\n`` a`b ``"


def test_long_tables_chunk_between_rows_with_the_header_repeated() -> None:
    rows = "".join(f"<tr><td>row {i}</td><td>{'value ' * 8}</td></tr>" for i in range(40))
    html = f"<h1>Data</h1><table><tr><th>Name</th><th>Value</th></tr>{rows}</table>"
    chunks = chunk_sections(parse(html, doc_id="data.html"), max_chars=400)
    assert len(chunks) > 2
    for chunk in chunks:
        body = chunk.text.split("\n\n", 1)[1].split("\n")
        assert body[:2] == ["| Name | Value |", "| --- | --- |"]
        assert all(line.startswith("| row ") and line.endswith(" |") for line in body[2:])
    seen = [line for c in chunks for line in c.text.split("\n") if line.startswith("| row ")]
    assert len(seen) == 40


def test_registered_for_html_and_htm() -> None:
    assert isinstance(parser_for("a/b.html"), HTMLParser)
    assert isinstance(parser_for("B.HTM"), HTMLParser)
    sections = HTMLParser().parse("<h1>T</h1>", doc_id="t.html", site_url=SITE, version=None)
    assert sections[0].url == f"{SITE}t.html"
