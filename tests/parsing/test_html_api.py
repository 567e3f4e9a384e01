"""API entries on built pages: Sphinx object descriptions and mkdocstrings headings become
sections at their ids, shaped like the source parsers' API sections."""

from __future__ import annotations

from citewise.models import Chunk, Section
from citewise.parsing.html import parse_html
from citewise.retrieval.apiunits import api_unit

SITE = "https://docs.example/en/1.0/"

# The structure of Sphinx's html5 writer (packaging's version page, furo).
SPHINX = """<html><body><div class="page"><article role="main" id="furo-main-content">
<section id="module-packaging.version"><span id="version-handling"></span>
<h1>Version Handling<a class="headerlink" href="#module-packaging.version">¶</a></h1>
<p>Work with versions.</p>
<section id="reference"><h2>Reference<a class="headerlink" href="#reference">¶</a></h2>
<dl class="py function">
<dt class="sig sig-object py" id="packaging.version.parse">
<span class="sig-prename descclassname"><span class="pre">packaging.version.</span></span><span
class="sig-name descname"><span class="pre">parse</span></span><span class="sig-paren">(</span><em
class="sig-param"><span class="n"><span class="pre">version</span></span><span
class="p"><span class="pre">:</span></span> <span class="n"><a class="reference internal"
href="#x"><span class="pre">str</span></a></span></em><span class="sig-paren">)</span><a
class="reference internal" href="_modules/packaging/version.html#parse"><span
class="viewcode-link"><span class="pre">[source]</span></span></a><a class="headerlink"
href="#packaging.version.parse" title="Link to this definition">¶</a></dt>
<dd><p>Parse the given version string.</p></dd></dl>
<dl class="py class">
<dt class="sig sig-object py" id="packaging.version.Version">
<em class="property"><span class="k"><span class="pre">class</span></span><span class="w"> </span>
</em><span
class="sig-prename descclassname"><span class="pre">packaging.version.</span></span><span
class="sig-name descname"><span class="pre">Version</span></span><span
class="sig-paren">(</span><em class="sig-param"><span class="n"><span
class="pre">version</span></span></em><span class="sig-paren">)</span><a class="headerlink"
href="#packaging.version.Version">¶</a></dt>
<dd><p>Bases: <code class="xref py py-class docutils literal notranslate"><span
class="pre">object</span></code></p><p>This class abstracts handling of a version.</p>
<dl class="py method">
<dt class="sig sig-object py" id="packaging.version.Version.__init__">
<span class="sig-name descname"><span class="pre">__init__</span></span><span
class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">version</span>
</span></em><span
class="sig-paren">)</span><a class="headerlink" href="#packaging.version.Version.__init__">¶</a>
</dt>
<dd><p>Initialize a Version object.</p></dd></dl>
<dl class="py property">
<dt class="sig sig-object py" id="packaging.version.Version.epoch">
<em class="property"><span class="k"><span class="pre">property</span></span>
<span class="w"> </span></em><span
class="sig-name descname"><span class="pre">epoch</span></span><span
class="p"><span class="pre">:</span></span> <span class="pre">int</span><a class="headerlink"
href="#packaging.version.Version.epoch">¶</a></dt>
<dd><p>The epoch of the version.</p></dd></dl>
</dd></dl>
<dl class="py exception"><dt class="sig sig-object py" id="packaging.version.InvalidVersion">
<em class="property"><span class="pre">exception</span> </em>
<span class="sig-prename descclassname"><span
class="pre">packaging.version.</span></span><span class="sig-name descname"><span
class="pre">InvalidVersion</span></span></dt><dd><p>Raised when invalid.</p></dd></dl>
</section></section></article></div></body></html>"""

# mkdocstrings-python's templates under MkDocs Material (griffe's reference pages).
MKDOCSTRINGS = """<html><head><meta name="generator" content="mkdocs-1.6.1, mkdocs-material-9.8.2">
</head><body><div class="md-container"><div class="md-content">
<article class="md-content__inner md-typeset">
<h1 id="helpers">Helpers<a class="headerlink" href="#helpers" title="Permanent link">¤</a></h1>
<div class="doc doc-object doc-class">
<h2 id="griffe.TmpPackage" class="doc doc-heading">
<code class="doc-symbol doc-symbol-heading doc-symbol-class"></code>
<span class="doc doc-object-name doc-class-name">TmpPackage</span>
<span class="doc doc-labels"><small class="doc doc-label doc-label-dataclass"><code>dataclass</code>
</small></span><a href="#griffe.TmpPackage" class="headerlink" title="Permanent link">¤</a></h2>
<div class="doc-signature highlight"><pre><span></span><code><span class="nf">TmpPackage</span><span
class="p">(</span>tmpdir<span class="p">:</span> Path<span class="p">)</span>
</code></pre></div>
<div class="doc doc-contents first"><p>A temporary package.</p>
<div class="doc doc-children">
<div class="doc doc-object doc-function">
<h3 id="griffe.TmpPackage.resolve" class="doc doc-heading">
<code class="doc-symbol doc-symbol-heading doc-symbol-method"></code>
<span class="doc doc-object-name doc-function-name">resolve</span>
<a href="#griffe.TmpPackage.resolve" class="headerlink" title="Permanent link">¤</a></h3>
<div class="doc doc-contents "><p>Resolve the paths.</p>
<p><span class="doc-section-title">Parameters:</span></p><ul>
<li class="doc-section-item field-body">
<h4 id="griffe.TmpPackage.resolve(strict)" class="doc doc-heading doc-heading-parameter">
<b><code>strict</code></b><a href="#griffe.TmpPackage.resolve(strict)" class="headerlink">¤</a></h4>
(<code>bool</code>) – <div class="doc-md-description"><p>Fail on missing paths.</p></div></li>
</ul></div></div></div></div></div>
<div class="doc doc-object doc-module"><a id="griffe.helpers"></a>
<div class="doc doc-contents first"><p>Helpers for tests.</p></div></div>
</article></div></div></body></html>"""


def parse(html: str, doc_id: str) -> list[Section]:
    return parse_html(html, doc_id=doc_id, site_url=SITE, version=None)


def unit_of(section: Section) -> tuple[str, str] | None:
    chunk = Chunk(chunk_id="c", doc_id=section.doc_id, position=0, section_index=0,
                  text=section.text, title=section.title, heading_path=section.heading_path,
                  anchor=section.anchor, url=section.url, page=section.page)  # fmt: skip
    unit = api_unit(chunk)
    return (unit.object_id, unit.kind) if unit is not None else None


def test_sphinx_object_descriptions_are_sections_at_their_ids() -> None:
    sections = parse(SPHINX, "version.html")
    assert [(s.title, s.anchor, s.level) for s in sections] == [
        ("Version Handling", "", 1),
        # The module target on the page-title section: an entry of its own after the title.
        ("module packaging.version", "module-packaging.version", 2),
        ("Reference", "reference", 2),
        ("packaging.version.parse()", "packaging.version.parse", 3),
        ("class packaging.version.Version", "packaging.version.Version", 3),
        ("__init__()", "packaging.version.Version.__init__", 4),
        ("property epoch", "packaging.version.Version.epoch", 4),
        ("exception packaging.version.InvalidVersion", "packaging.version.InvalidVersion", 3),
    ]
    parse_fn, version, init = sections[3], sections[4], sections[5]
    # The signature goes to the body as code, without its permalink or "[source]" link.
    assert parse_fn.text == (
        "```python\npackaging.version.parse(version: str)\n```\n\nParse the given version string."
    )
    assert parse_fn.url == f"{SITE}version.html#packaging.version.parse"
    assert "Bases: `object`" in version.text
    assert init.heading_path == ("Version Handling", "Reference",
                                 "class packaging.version.Version", "__init__()")  # fmt: skip


def test_sphinx_entries_are_api_units_for_ranking() -> None:
    units = [unit_of(s) for s in parse(SPHINX, "version.html")]
    assert units[3:] == [
        ("packaging.version.parse", "function"),
        ("packaging.version.Version", "class"),
        ("packaging.version.Version.__init__", "function"),
        ("packaging.version.Version.epoch", "attribute"),
        ("packaging.version.InvalidVersion", "class"),
    ]
    assert units[0] is None and units[2] is None


def test_mkdocstrings_headings_are_entries_with_short_titles() -> None:
    sections = parse(MKDOCSTRINGS, "reference/helpers/index.html")
    assert [(s.title, s.anchor) for s in sections] == [
        ("Helpers", ""),
        ("class TmpPackage", "griffe.TmpPackage"),
        ("resolve()", "griffe.TmpPackage.resolve"),
        # A parameter heading (inside a list item) is a plain section at its own id.
        ("strict", "griffe.TmpPackage.resolve(strict)"),
        # An object without a heading: the empty anchor mkdocstrings puts first in it.
        ("module griffe.helpers", "griffe.helpers"),
    ]
    tmp = sections[1]
    assert tmp.text.startswith("`dataclass`\n\n```python\nTmpPackage(tmpdir: Path)\n```")
    assert "A temporary package." in tmp.text
    assert [unit_of(s) for s in sections[1:3]] == [
        ("griffe.TmpPackage", "class"),
        ("griffe.TmpPackage.resolve", "function"),
    ]
    assert sections[2].heading_path == ("Helpers", "class TmpPackage", "resolve()")


def test_a_page_opening_with_an_api_entry_is_cited_by_its_url_too() -> None:
    html = """<html><head><title>API reference - Widget</title></head><body>
    <div class="md-container"><article class="md-content__inner md-typeset">
    <div class="doc doc-object doc-module">
    <h1 id="widget" class="doc doc-heading"><span class="doc doc-object-name">widget</span></h1>
    <div class="doc doc-contents first"><p>The widget package.</p></div></div>
    </article></div></body></html>"""
    sections = parse(html, "reference/index.html")
    assert [(s.title, s.url) for s in sections] == [
        ("API reference", f"{SITE}reference/"),
        ("widget", f"{SITE}reference/#widget"),
    ]
    assert unit_of(sections[1]) == ("widget", "module")
