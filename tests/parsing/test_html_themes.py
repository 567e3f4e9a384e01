"""Built pages of the common generators: their content container, chrome dropped, anchors from
the page, code languages, admonitions and scopes from their navigation.

The fixtures copy the structure of real built pages (MkDocs Material and Sphinx themes from
the sites under /work/sites/.build; Docusaurus and VitePress from their default themes).
"""

from __future__ import annotations

from bs4 import BeautifulSoup

from citewise.models import Section
from citewise.parsing.html import page_ids, parse_html
from citewise.parsing.html_themes import index_page, recognise

SITE = "https://docs.example/"

MATERIAL = """<!doctype html><html><head><meta name="generator"
content="mkdocs-1.6.1, mkdocs-material-9.8.2"><title>Loading - Widget</title></head>
<body><a href="#loading" class="md-skip">Skip to content</a>
<header class="md-header"><nav class="md-header__inner">Widget HEADERCHROME</nav></header>
<div class="md-container"><main class="md-main"><div class="md-main__inner md-grid">
<div class="md-sidebar md-sidebar--primary"><div class="md-sidebar__scrollwrap">
<nav class="md-nav md-nav--primary" aria-label="Navigation"><ul class="md-nav__list">
<li class="md-nav__item"><a href="../.." class="md-nav__link">Home</a></li>
<li class="md-nav__item md-nav__item--active md-nav__item--nested">
  <input class="md-nav__toggle md-toggle" type="checkbox" id="__nav_2" checked>
  <label class="md-nav__link" for="__nav_2">User guide</label>
  <nav class="md-nav"><ul class="md-nav__list">
    <li class="md-nav__item md-nav__item--active"><a href="./" class="md-nav__link
      md-nav__link--active">Loading</a></li>
    <li class="md-nav__item"><a href="../dumping/" class="md-nav__link">Dumping</a></li>
  </ul></nav></li></ul></nav></div></div>
<div class="md-sidebar md-sidebar--secondary"><nav class="md-nav md-nav--secondary">
<label class="md-nav__title">On this page TOCCHROME</label></nav></div>
<div class="md-content" data-md-component="content">
<nav class="md-path" aria-label="Navigation"><ol class="md-path__list">
<li class="md-path__item"><a href="../.." class="md-path__link">BREADCRUMB</a></li></ol></nav>
<article class="md-content__inner md-typeset">
<a href="https://git.example/edit/docs/loading.md" title="Edit this page"
   class="md-content__button md-icon" rel="edit">EDITLINK</a>
<h1 id="loading">Loading<a class="headerlink" href="#loading" title="Permanent link">¤</a></h1>
<p>Load a package.</p>
<h2 id="from-source">From source<a class="headerlink" href="#from-source">¤</a></h2>
<div class="language-python highlight"><pre><span></span><code><span class="kn">import</span> widget
</code></pre></div>
<div class="admonition warning"><p class="admonition-title">Careful</p><p>It runs code.</p></div>
<details class="tip"><summary>Hidden tip</summary><p>Folded text.</p></details>
<h3>Untitled id</h3><p>No id here.</p>
<table><thead><tr><th>Option</th><th>Default</th></tr></thead>
<tbody><tr><td>depth</td><td>2</td></tr></tbody></table>
<aside class="md-source-file">Last update: SOURCEFILE</aside>
</article></div></div></main>
<footer class="md-footer"><nav class="md-footer__inner">Next: Dumping PREVNEXT</nav></footer>
</div></body></html>"""

FURO = """<!doctype html><html><head><title>Version Handling - packaging</title></head>
<body><div class="page"><aside class="sidebar-drawer"><div class="sidebar-container">
<div class="sidebar-scroll"><div class="sidebar-tree"><p class="caption" role="heading">
<span class="caption-text">API</span></p><ul class="current">
<li class="toctree-l1 current current-page"><a class="current reference internal"
  href="#">Version Handling</a></li>
<li class="toctree-l1"><a class="reference internal" href="specifiers.html">Specifiers</a></li>
</ul></div></div></div></aside>
<div class="main"><div class="content"><div class="article-container">
<a href="#" class="back-to-top muted-link">Back to top</a>
<div class="content-icon-container"><div class="edit-this-page">
<a class="muted-link" href="https://git.example/edit/version.rst">EDITTHIS</a></div></div>
<article role="main" id="furo-main-content">
<section id="version-handling">
<h1>Version Handling<a class="headerlink" href="#version-handling" title="Link">¶</a></h1>
<p>Work with versions.</p>
<section id="usage"><h2>Usage<a class="headerlink" href="#usage">¶</a></h2>
<div class="highlight-pycon notranslate"><div class="highlight"><pre><span></span><span class="gp">
&gt;&gt;&gt; </span>parse("1.0")
</pre></div></div>
<div class="admonition note"><p class="admonition-title">Note</p><p>Versions compare.</p></div>
<dl class="simple"><dt>epoch</dt><dd><p>The epoch number.</p></dd></dl>
<figure class="align-default"><img alt="A version diagram" src="v.png"></figure>
</section></section></article></div>
<footer><div class="related-pages"><a class="next-page" href="specifiers.html">PREVNEXT</a>
</div><div class="bottom-of-page">Copyright FOOTERCHROME</div></footer>
</div><aside class="toc-drawer"><div class="toc-title">On this page TOCCHROME</div></aside>
</div></div></body></html>"""

RTD = """<html><head><title>Install</title></head><body class="wy-body-for-nav">
<div class="wy-grid-for-nav"><nav data-toggle="wy-nav-shift" class="wy-nav-side">
<div class="wy-menu wy-menu-vertical" role="navigation"><ul class="current">
<li class="toctree-l1 current"><a class="reference internal" href="../guide/">Guide</a>
<ul class="current"><li class="toctree-l2 current"><a class="current reference internal"
href="#">Install</a></li><li class="toctree-l2"><a href="../guide/usage.html">Usage</a></li>
</ul></li></ul></div></nav>
<section data-toggle="wy-nav-shift" class="wy-nav-content-wrap"><div class="wy-nav-content">
<div class="rst-content"><div role="navigation" aria-label="Page navigation">
<ul class="wy-breadcrumbs"><li>BREADCRUMB</li></ul></div>
<div role="main" class="document" itemscope="itemscope">
<div itemprop="articleBody"><section id="install"><h1>Install<a class="headerlink"
href="#install">¶</a></h1><p>Run pip.</p></section></div></div>
<footer><div class="rst-footer-buttons" role="navigation">PREVNEXT</div></footer>
</div></div></section></div></body></html>"""

ALABASTER = """<html><head><title>Quickstart</title></head><body>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main"><section id="quickstart"><span id="quick"></span>
<h1>Quickstart<a class="headerlink" href="#quickstart">¶</a></h1><p>Make a request.</p>
<section id="json"><h2>JSON<a class="headerlink" href="#json">¶</a></h2><p>Decode it.</p>
</section></section></div></div></div>
<div class="sphinxsidebar" role="navigation"><h3>Navigation SIDEBAR</h3></div></div>
<div class="footer">FOOTERCHROME</div></body></html>"""

PYDATA = """<html><head><meta name="generator" content="pydata-sphinx-theme"><title>T</title>
</head><body><div class="bd-container"><div class="bd-sidebar-primary bd-sidebar">
<nav class="bd-docs-nav bd-links"><ul class="nav bd-sidenav"><li class="toctree-l1">SIDEBAR
</li></ul></nav></div><main id="main-content" class="bd-main"><div class="bd-content">
<div class="bd-article-container"><div class="bd-header-article">BREADCRUMB</div>
<article class="bd-article"><section id="guide"><h1>Guide<a class="headerlink"
href="#guide">#</a></h1><p>Read this.</p></section></article>
<footer class="prev-next-footer"><div class="prev-next-area">PREVNEXT</div></footer>
</div></div></main></div></body></html>"""

DOCUSAURUS = """<!doctype html><html><head><meta name="generator" content="Docusaurus v3.5.2">
<title>Tutorial Intro | My Site</title></head><body><div id="__docusaurus">
<nav aria-label="Main" class="navbar navbar--fixed-top">NAVBAR</nav>
<div class="main-wrapper"><div class="docsWrapper"><div class="docRoot">
<aside class="theme-doc-sidebar-container"><nav aria-label="Docs sidebar" class="menu">
<ul class="theme-doc-sidebar-menu menu__list">
<li class="theme-doc-sidebar-item-link menu__list-item"><a class="menu__link"
  href="/docs/intro">Intro</a></li>
<li class="theme-doc-sidebar-item-category menu__list-item"><div
  class="menu__list-item-collapsible"><a class="menu__link menu__link--sublist"
  href="/docs/category/basics">Tutorial - Basics</a></div><ul class="menu__list">
  <li class="menu__list-item"><a class="menu__link menu__link--active" aria-current="page"
    href="/docs/basics/create-a-page">Create a Page</a></li>
  <li class="menu__list-item"><a class="menu__link" href="/docs/basics/deploy">Deploy</a></li>
</ul></li></ul></nav></aside>
<main class="docMainContainer"><div class="container"><div class="row"><div class="col">
<article><nav class="theme-doc-breadcrumbs" aria-label="Breadcrumbs">BREADCRUMB</nav>
<div class="theme-doc-toc-mobile tocMobile"><button type="button">On this page</button></div>
<div class="theme-doc-markdown markdown"><header><h1>Create a Page</h1></header>
<p>Add Markdown files.</p>
<h2 class="anchor anchorWithStickyNavbar" id="create-your-first-page">Create your first
Page<a href="#create-your-first-page" class="hash-link" aria-label="Direct link"
title="Direct link">\u200b</a></h2>
<div class="language-bash codeBlockContainer theme-code-block"><div class="codeBlockContent">
<pre tabindex="0" class="prism-code language-bash codeBlock"><code class="codeBlockLines"><span
class="token-line"><span class="token plain">npm run start</span><br></span><span
class="token-line"><span class="token plain">npm run build</span><br></span></code></pre>
<div class="buttonGroup"><button type="button" aria-label="Copy">COPYBUTTON</button></div>
</div></div>
<div class="theme-admonition theme-admonition-tip admonition alert alert--success"><div
class="admonitionHeading"><span class="admonitionIcon"><svg></svg></span>tip</div><div
class="admonitionContent"><p>Pages reload live.</p></div></div>
</div><footer class="theme-doc-footer docusaurus-mt-lg"><a href="https://git.example/edit"
class="theme-edit-this-page">EDITTHIS</a></footer></article>
<nav class="pagination-nav" aria-label="Docs pages">PREVNEXT</nav></div>
<div class="col col--3"><div class="theme-doc-toc-desktop"><ul class="table-of-contents">
<li><a href="#create-your-first-page">TOCCHROME</a></li></ul></div></div></div></div></main>
</div></div></div><footer class="footer">FOOTERCHROME</footer></div></body></html>"""

VITEPRESS = """<!DOCTYPE html><html lang="en-US"><head><meta name="generator"
content="VitePress v1.3.4"><title>Getting Started | VitePress</title></head><body>
<div id="app"><div class="Layout"><a href="#VPContent" class="VPSkipLink visually-hidden">
Skip to content</a><header class="VPNav">NAVBAR</header>
<aside class="VPSidebar"><nav class="nav" id="VPSidebarNav"><div class="group">
<section class="VPSidebarItem level-0 collapsible has-active"><div class="item"
role="button"><h2 class="text">Introduction</h2></div><div class="items">
<div class="VPSidebarItem level-1 is-link"><div class="item"><a class="VPLink link"
href="/guide/what-is-vitepress"><p class="text">What is VitePress?</p></a></div></div>
<div class="VPSidebarItem level-1 is-active is-link"><div class="item"><a class="VPLink link"
href="/guide/getting-started"><p class="text">Getting Started</p></a></div></div>
</div></section></div></nav></aside>
<div class="VPContent has-sidebar" id="VPContent"><div class="VPDoc"><div class="container">
<div class="aside"><nav class="VPDocAsideOutline">TOCCHROME</nav></div>
<div class="content"><div class="content-container"><main class="main">
<div class="vp-doc _guide_getting-started"><div>
<h1 id="getting-started" tabindex="-1">Getting Started <a class="header-anchor"
href="#getting-started" aria-label="Permalink">\u200b</a></h1>
<div class="tip custom-block"><p class="custom-block-title">TIP</p><p>Needs Node 18.</p></div>
<h2 id="installation" tabindex="-1">Installation <a class="header-anchor"
href="#installation">\u200b</a></h2>
<div class="language-sh vp-adaptive-theme"><button title="Copy Code" class="copy"></button>
<span class="lang">sh</span><pre class="shiki vp-code" tabindex="0"><code><span
class="line"><span>$ npm add -D vitepress</span></span></code></pre></div>
</div></div></main><footer class="VPDocFooter"><div class="edit-info">EDITTHIS</div>
<nav class="prev-next">PREVNEXT</nav></footer></div></div></div></div></div></div></div>
</body></html>"""

CHROME = ("HEADERCHROME", "TOCCHROME", "BREADCRUMB", "EDITLINK", "EDITTHIS", "SOURCEFILE",
          "PREVNEXT", "FOOTERCHROME", "SIDEBAR", "NAVBAR", "COPYBUTTON", "Skip to content",
          "Back to top", "¤", "¶")  # fmt: skip


def parse(html: str, doc_id: str) -> list[Section]:
    return parse_html(html, doc_id=doc_id, site_url=SITE, version=None)


def text_of(sections: list[Section]) -> str:
    return "\n".join(f"{s.title}\n{s.text}" for s in sections)


def assert_anchors_on_page(html: str, sections: list[Section]) -> None:
    ids = page_ids(BeautifulSoup(html, "html.parser"))
    for section in sections:
        anchor = section.url.partition("#")[2]
        assert not anchor or anchor in ids, section.url


def test_each_generator_is_recognised_from_its_markup() -> None:
    found = {
        name: recognise(index_page(BeautifulSoup(html, "html.parser"))).name
        for name, html in (
            ("material", MATERIAL),
            ("furo", FURO),
            ("rtd", RTD),
            ("alabaster", ALABASTER),
            ("pydata", PYDATA),
            ("docusaurus", DOCUSAURUS),
            ("vitepress", VITEPRESS),
        )  # fmt: skip
    }
    assert found == {
        "material": "mkdocs-material", "furo": "furo", "rtd": "sphinx-rtd-theme",
        "alabaster": "sphinx-basic", "pydata": "pydata-sphinx-theme",
        "docusaurus": "docusaurus", "vitepress": "vitepress",
    }  # fmt: skip


def test_material_page_content_structure_and_anchors() -> None:
    sections = parse(MATERIAL, "guide/loading/index.html")
    text = text_of(sections)
    for gone in CHROME:
        assert gone not in text, gone
    assert [(s.title, s.url) for s in sections] == [
        ("Loading", f"{SITE}guide/loading/"),
        ("From source", f"{SITE}guide/loading/#from-source"),
        # No id of its own: cited at the nearest id before it, never at an invented slug.
        ("Untitled id", f"{SITE}guide/loading/#from-source"),
    ]
    source = sections[1].text
    assert "```python\nimport widget\n```" in source
    assert "Careful: It runs code." in source
    assert "Hidden tip: Folded text." in source
    assert sections[2].text.endswith("| Option | Default |\n| --- | --- |\n| depth | 2 |")
    assert {s.scope for s in sections} == {"guide library"}
    assert_anchors_on_page(MATERIAL, sections)


def test_furo_page_keeps_code_language_admonitions_definitions_and_images() -> None:
    sections = parse(FURO, "version.html")
    text = text_of(sections)
    for gone in CHROME:
        assert gone not in text, gone
    assert [(s.title, s.anchor) for s in sections] == [("Version Handling", ""),
                                                         ("Usage", "usage")]  # fmt: skip
    usage = sections[1].text
    assert '```pycon\n>>> parse("1.0")\n```' in usage
    assert "Note: Versions compare." in usage
    assert "epoch\n: The epoch number." in usage
    assert "[Image: A version diagram]" in usage
    # A top-level toctree entry that is the page itself: the main scope only.
    assert {s.scope for s in sections} == {"library"}
    assert_anchors_on_page(FURO, sections)


def test_read_the_docs_alabaster_and_pydata_read_only_their_body() -> None:
    for html, doc_id, titles in (
        (RTD, "guide/install.html", ["Install"]),
        (ALABASTER, "user/quickstart/index.html", ["Quickstart", "JSON"]),
        (PYDATA, "guide.html", ["Guide"]),
    ):
        sections = parse(html, doc_id)
        assert [s.title for s in sections] == titles
        text = text_of(sections)
        for gone in CHROME:
            assert gone not in text, (doc_id, gone)
        assert_anchors_on_page(html, sections)
    rtd = parse(RTD, "guide/install.html")
    assert rtd[0].scope == "guide library"


def test_docusaurus_page() -> None:
    sections = parse(DOCUSAURUS, "docs/basics/create-a-page.html")
    text = text_of(sections)
    for gone in CHROME:
        assert gone not in text, gone
    assert [(s.title, s.anchor) for s in sections] == [
        ("Create a Page", ""),
        ("Create your first Page", "create-your-first-page"),
    ]
    body = sections[1].text
    assert "```bash\nnpm run start\nnpm run build\n```" in body
    assert "tip: Pages reload live." in body
    assert_anchors_on_page(DOCUSAURUS, sections)


def test_vitepress_page() -> None:
    sections = parse(VITEPRESS, "guide/getting-started.html")
    text = text_of(sections)
    for gone in CHROME:
        assert gone not in text, gone
    assert [(s.title, s.anchor) for s in sections] == [
        ("Getting Started", ""),
        ("Installation", "installation"),
    ]
    assert sections[0].text == "TIP: Needs Node 18."
    assert sections[1].text == "```sh\n$ npm add -D vitepress\n```"
    assert {s.scope for s in sections} == {"guide library"}
    assert_anchors_on_page(VITEPRESS, sections)


def test_a_given_scope_wins_and_nav_scopes_can_be_turned_off() -> None:
    given = parse_html(MATERIAL, doc_id="guide/loading/index.html", site_url=SITE,
                       version=None, scope="mine")  # fmt: skip
    assert {s.scope for s in given} == {"mine"}
    off = parse_html(MATERIAL, doc_id="guide/loading/index.html", site_url=SITE,
                     version=None, scope_from_nav=False)  # fmt: skip
    assert {s.scope for s in off} == {""}
