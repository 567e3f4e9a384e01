"""Markdown sections: headings, anchors, URLs and links as the published site has them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.models import Section
from citewise.parsing.base import MarkdownParser, Parser, parser_for, supported_suffixes
from citewise.parsing.layout import SiteLayout
from citewise.parsing.markdown import page_path, page_url, parse_markdown, site_base

SHARED_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
LGOS = SHARED_DATA / "lgos-docs-0.12.0"
SITE = "https://ilkersigirci.github.io/langgraph-openai-serve/"
VERSION = "0.12.0"
BASE = f"{SITE}{VERSION}/"


def parse(text: str, doc_id: str = "guide/page.md") -> list[Section]:
    return parse_markdown(text, doc_id=doc_id, site_url=SITE, version=VERSION)


def anchors(text: str) -> list[str]:
    return [section.anchor for section in parse(text)]


# --- the conformance test: every section we compute is on the published site, and back ----


def _lgos_sections() -> dict[str, Section]:
    docs = LGOS / "docs"
    if not docs.is_dir():
        pytest.skip(f"LGOS 0.12.0 release not found at {docs.resolve()} (shared data absent)")
    found: dict[str, Section] = {}
    for path in sorted(docs.rglob("*.md")):
        doc_id = path.relative_to(docs).as_posix()
        for section in parse_markdown(
            path.read_text(encoding="utf-8"), doc_id=doc_id, site_url=SITE, version=VERSION
        ):
            assert section.url.startswith(BASE), section.url
            location = section.url.removeprefix(BASE)
            assert location not in found, f"two sections share {section.url}"
            found[location] = section
    return found


def _lgos_index() -> dict[str, dict[str, object]]:
    index = LGOS / "_site_gh-pages" / f"{VERSION}-search.json"
    if not index.is_file():
        pytest.skip(f"published search index not found at {index.resolve()}")
    items = json.loads(index.read_text(encoding="utf-8"))["items"]
    # Those entries come from docstrings rendered by mkdocstrings, not from the Markdown.
    return {
        item["location"]: item
        for item in items
        if not item["location"].startswith("reference/#langgraph_openai_serve")
    }


def test_every_lgos_section_matches_the_published_search_index() -> None:
    ours = _lgos_sections()
    published = _lgos_index()
    assert len(published) == 133
    assert sorted(set(ours) - set(published)) == [], "sections the site does not have"
    assert sorted(set(published) - set(ours)) == [], "published sections we did not find"
    for location, item in published.items():
        section = ours[location]
        assert section.title == item["title"], location
        assert section.level == item["level"], location
        # The index's path is nav sections + the page title, which is our path's root.
        assert isinstance(item["path"], list)
        assert section.heading_path[0] == item["path"][-1], location
        assert section.heading_path[-1] == section.title, location


def test_lgos_heading_paths_and_rewritten_links() -> None:
    ours = _lgos_sections()
    install = ours["getting-started/#install"]
    assert install.heading_path == ("Get Started With The Package", "Install")
    assert install.doc_id == "getting-started.md"
    assert install.page == "getting-started/"
    resolution = ours["explanation/openai-compatibility/#per-request-resolution"]
    assert resolution.heading_path == (
        "OpenAI API Compatibility",
        "Runtime Settings",
        "Per-Request Resolution",
    )
    assert resolution.level == 3
    tutorials = ours["tutorials/"].text
    assert f"[Demo Stack]({BASE}demo/)" in tutorials
    assert ".md)" not in tutorials
    assert ours[""].url == BASE


# --- headings -----------------------------------------------------------------------------


@pytest.mark.parametrize("fence", ["```", "~~~", "````", "```python", "~~~ {.yaml}"])
def test_headings_inside_fences_are_code(fence: str) -> None:
    closer = fence.split()[0].rstrip("python")
    text = f"# Page\n\n## Real\n\n{fence}\n# not a heading\n## nor this\n{closer}\n\nafter\n"
    sections = parse(text)
    assert [s.title for s in sections] == ["Page", "Real"]
    assert "# not a heading" in sections[1].text
    assert sections[1].text.endswith("after")


@pytest.mark.parametrize(
    ("inner", "closes"),
    [
        ("~~~", False),  # another character does not close a backtick fence
        ("``", False),  # nor a shorter run
        ("````", False),  # nor a longer one: superfences wants the very same fence
        ("```", True),
        ("```  ", True),
    ],
)
def test_fence_closing_rules(inner: str, closes: bool) -> None:
    text = f"# Page\n\n```\n{inner}\n## Inside?\n```\n"
    titles = [s.title for s in parse(text)]
    assert titles == (["Page", "Inside?"] if closes else ["Page"])


def test_indented_fence_in_a_tab_keeps_its_comments() -> None:
    text = '# Page\n\n=== "Python"\n\n    ```python\n    # comment\n\n    ## more\n    ```\n'
    (section,) = parse(text)
    assert "    # comment" in section.text


def test_line_less_indented_than_its_fence_abandons_it() -> None:
    # superfences gives up on the fence, so the site renders that line as a heading.
    text = '# Page\n\n=== "Python"\n\n    ```python\n# comment\n    ```\n'
    assert [s.title for s in parse(text)] == ["Page", "comment"]


def test_unclosed_fence_is_text_and_ends_fence_search() -> None:
    text = "# Page\n\n````\n## One\n\n```\n## Two\n```\n"
    assert [s.title for s in parse(text)] == ["Page", "One", "Two"]


def test_fence_right_after_indented_code_is_text() -> None:
    # An indented code block's block turns superfences' placeholders back into text.
    text = "# Page\n\n    indented code\n```\n## Shown\n```\n\n```\n## Hidden\n```\n"
    assert [s.title for s in parse(text)] == ["Page", "Shown"]


def test_setext_headings() -> None:
    text = "Title\n=====\n\nintro\n\nPart\n----\nbody\n\npara one\npara two\n---\n"
    sections = parse(text)
    assert [(s.title, s.level, s.anchor) for s in sections] == [
        ("Title", 1, ""),
        ("Part", 2, "part"),
    ]
    # Python-Markdown only reads a setext heading from a block's first line: that is a rule.
    assert sections[1].text == "body\n\npara one\npara two\n---"


def test_tab_labels_are_not_setext_underlines() -> None:
    text = '# Page\n\nText\n=== "Python"\n\n    code\n'
    assert [s.title for s in parse(text)] == ["Page"]


@pytest.mark.parametrize(
    ("line", "title", "level"),
    [
        ("## Foo ##", "Foo", 2),
        ("### Foo#", "Foo", 3),
        ("##NoSpace", "NoSpace", 2),
        ("###### Six", "Six", 6),
        (r"## trailing \#", "trailing #", 2),
    ],
)
def test_atx_variants(line: str, title: str, level: int) -> None:
    sections = parse(f"# Page\n\n{line}\n")
    assert (sections[1].title, sections[1].level) == (title, level)


def test_indented_hash_is_not_a_heading() -> None:
    assert [s.title for s in parse("# Page\n\n    # code\n   ## deeper\n")] == ["Page"]


def test_html_comment_hides_headings() -> None:
    assert [s.title for s in parse("# Page\n\n<!--\n## Hidden\n-->\n\n## Shown\n")] == [
        "Page",
        "Shown",
    ]


# --- anchors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# Setup\n## Setup\n## Setup\n", ["", "setup_1", "setup_2"]),
        ("# Page\n## Run\n### Run\n## Run\n", ["", "run", "run_1", "run_2"]),
        # custom ids are reserved before numbering, wherever they appear
        ("# Page\n## Notes\n## Other { #notes }\n", ["", "notes_1", "notes"]),
        ("# Page\n## A\n## A\n## B {#a_1}\n", ["", "a", "a_2", "a_1"]),
        ("# Page\n## Same_1\n## Same\n## Same\n", ["", "same_1", "same", "same_2"]),
        ("# Page\n## `a<b>` <em>x</em> [link](u.md)\n", ["", "ab-x-link"]),
        ("# Page\n## __init__ method\n", ["", "init-method"]),
        ("# Page\n##\n", ["", "_1"]),
        ("Page\n====\n\nPage\n----\n", ["", "page_1"]),
    ],
)
def test_anchor_numbering(text: str, expected: list[str]) -> None:
    assert anchors(text) == expected


def test_first_h1_gets_the_bare_page_url_but_reserves_its_slug() -> None:
    first, second = parse("# Guide\n\ntext\n\n## Guide\n", doc_id="how-to/guide.md")
    assert (first.anchor, first.url) == ("", f"{BASE}how-to/guide/")
    assert (second.anchor, second.url) == ("guide_1", f"{BASE}how-to/guide/#guide_1")


def test_custom_id_on_first_h1_still_bare_url() -> None:
    first, second = parse("# Guide { #top }\n\n## Top\n")
    assert first.url == f"{BASE}guide/page/"
    assert second.anchor == "top_1"


# --- structure ----------------------------------------------------------------------------


def test_heading_paths_follow_levels() -> None:
    text = "# Page\n\n## A\n\n### A1\n\n#### deep\n\n## B\n\n### B1\n"
    paths = [s.heading_path for s in parse(text)]
    assert paths == [
        ("Page",),
        ("Page", "A"),
        ("Page", "A", "A1"),
        ("Page", "A", "A1", "deep"),
        ("Page", "B"),
        ("Page", "B", "B1"),
    ]


def test_empty_sections_are_kept() -> None:
    sections = parse("# Page\n\n## Empty\n\n## Full\n\ntext\n")
    assert [(s.title, s.text) for s in sections] == [("Page", ""), ("Empty", ""), ("Full", "text")]


def test_text_before_the_h1_joins_the_page_section() -> None:
    sections = parse("intro\n\n# Page\n\nbody\n")
    assert len(sections) == 1
    assert sections[0].text == "intro\n\nbody"


def test_page_without_h1_takes_its_title_from_the_file() -> None:
    sections = parse("intro text\n\n## Part\n\nbody\n", doc_id="how-to/openai-proxies.md")
    assert [(s.title, s.heading_path, s.anchor) for s in sections] == [
        ("Openai proxies", ("Openai proxies",), ""),
        ("Part", ("Openai proxies", "Part"), "part"),
    ]
    assert sections[0].url == f"{BASE}how-to/openai-proxies/"


def test_page_without_any_heading_is_one_section() -> None:
    (section,) = parse("just text\n", doc_id="index.md")
    assert (section.title, section.url, section.text) == ("Home", BASE, "just text")
    assert parse("\n\n", doc_id="index.md") == []


def test_front_matter_is_dropped() -> None:
    text = "---\ntitle: X\nhide:\n  - toc\n---\n\n# Page\n\nbody\n\nText\n---\n"
    sections = parse(text)
    assert [s.title for s in sections] == ["Page", "Text"]
    assert sections[0].text == "body"


def test_only_leading_front_matter_is_dropped() -> None:
    sections = parse("# Page\n\n---\nkey: value\n---\n")
    assert [s.title for s in sections] == ["Page", "key: value"]


def test_snippet_lines_stay_as_text() -> None:
    (section,) = parse('# Page\n\n--8<-- "includes/abbreviations.md"\n')
    assert section.text == '--8<-- "includes/abbreviations.md"'


def test_fields_are_filled() -> None:
    (section,) = parse_markdown(
        "# T\n\nx", doc_id="a/b.md", site_url="https://s.io/docs", version=None, scope="a"
    )
    assert section == Section(
        doc_id="a/b.md",
        title="T",
        heading_path=("T",),
        level=1,
        anchor="",
        url="https://s.io/docs/a/b/",
        page="a/b/",
        text="x",
        scope="a",
    )


# --- URLs and links -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc_id", "page"),
    [
        ("how-to-guides/openai-proxies.md", "how-to-guides/openai-proxies/"),
        ("demo/index.md", "demo/"),
        ("index.md", ""),
        ("getting-started.md", "getting-started/"),
        ("a/b/README.md", "a/b/"),
        ("notes.markdown", "notes/"),
        ("./a/x.md", "a/x/"),
        ("a\\win.md", "a/win/"),
    ],
)
def test_page_path(doc_id: str, page: str) -> None:
    assert page_path(doc_id) == page


@pytest.mark.parametrize(
    ("site_url", "version", "url"),
    [
        ("https://s.io/p/", "1.0", "https://s.io/p/1.0/a/"),
        ("https://s.io/p", "1.0", "https://s.io/p/1.0/a/"),
        ("https://s.io/p/", None, "https://s.io/p/a/"),
        ("https://s.io/p/", "", "https://s.io/p/a/"),
    ],
)
def test_page_url(site_url: str, version: str | None, url: str) -> None:
    assert page_url("a.md", site_url, version) == url
    assert site_base(site_url, version) + "a/" == url


@pytest.mark.parametrize(
    ("link", "rendered"),
    [
        (
            "../how-to-guides/authentication.md#api-key-middleware",
            f"{BASE}how-to-guides/authentication/#api-key-middleware",
        ),
        ("x.md", f"{BASE}tutorials/x/"),
        ("index.md", f"{BASE}tutorials/"),
        ("../index.md", BASE),
        ("./sub/page.md?tab=1#part", f"{BASE}tutorials/sub/page/?tab=1#part"),
        ("#local", f"{BASE}tutorials/first/#local"),
        ("../img/shot.png", f"{BASE}img/shot.png"),
        ("../demo/", f"{BASE}demo/"),
        ("https://example.com/a.md", "https://example.com/a.md"),
        ("mailto:me@example.com", "mailto:me@example.com"),
        ("/absolute/path.md", "/absolute/path.md"),
        ("../../outside.md", "../../outside.md"),
    ],
)
def test_links_are_rewritten_as_the_site_renders_them(link: str, rendered: str) -> None:
    (section,) = parse(f"# First\n\nSee [it]({link}) now.\n", doc_id="tutorials/first.md")
    assert section.text == f"See [it]({rendered}) now."


def test_link_forms() -> None:
    text = (
        "# P\n\n"
        '![diagram](arch.png "Arch") and [t](<a b.md> "title"){ .md-button }\n'
        "`[code](x.md)` stays, [ref]: not a definition\n\n"
        "[ref]: other.md#frag\n"
        "[^1]: footnote.md\n\n"
        "```\n[fenced](x.md)\n```\n"
    )
    (section,) = parse(text, doc_id="d/p.md")
    lines = section.text.split("\n")
    assert lines[0] == (
        f'![diagram]({BASE}d/arch.png "Arch") and [t](<{BASE}d/a b/> "title"){{ .md-button }}'
    )
    assert lines[1] == "`[code](x.md)` stays, [ref]: not a definition"
    assert lines[3] == f"[ref]: {BASE}d/other/#frag"
    assert lines[4] == "[^1]: footnote.md"
    assert "[fenced](x.md)" in section.text


def test_links_over_several_lines_and_definitions_with_the_target_below() -> None:
    text = (
        "# P\n\n"
        "See [the long\nlink text](other.md#part) and `a [code\nspan](x.md)` here.\n\n"
        "[ref]:\n    far.md\n\n"
        '<div class="grid" markdown>\n[card](card.md)\n</div>\n\n'
        "!!! note\n\n    Inside [an\n    admonition](note.md).\n"
    )
    (section,) = parse(text, doc_id="d/p.md")
    assert f"[the long\nlink text]({BASE}d/other/#part)" in section.text
    assert "`a [code\nspan](x.md)`" in section.text
    assert f"[ref]:\n    {BASE}d/far/" in section.text
    assert f"[card]({BASE}d/card/)" in section.text
    assert f"[an\n    admonition]({BASE}d/note/)" in section.text


def test_a_page_without_an_h1_is_still_cited_bare() -> None:
    sections = parse("## Boolean Logic\n\nText.\n", doc_id="usage.md")
    assert [(s.url, s.title, s.text) for s in sections] == [
        (f"{BASE}usage/", "Usage", ""),
        (f"{BASE}usage/#boolean-logic", "Boolean Logic", "Text."),
    ]


def test_emoji_shortcodes_are_icons_when_the_site_renders_them() -> None:
    text = "# P\n\n## :warning: Work in Progress!\n\n## Use `:param:` here\n"
    plain = [s.anchor for s in parse(text)]
    assert plain[1:] == ["warning-work-in-progress", "use-param-here"]
    layout = SiteLayout("mkdocs", markdown_extensions=("attr_list", "pymdownx.emoji"))
    sections = parse_markdown(text, doc_id="p.md", site_url="", version=None, layout=layout)
    assert [(s.title, s.anchor) for s in sections[1:]] == [
        ("Work in Progress!", "work-in-progress"),
        ("Use :param: here", "use-param-here"),
    ]


def test_links_take_the_page_form_of_the_site() -> None:
    layout = SiteLayout("mkdocs", directory_urls=False)
    (section,) = parse_markdown(
        "# P\n\n[a](../b/index.md) [c](c.md#x)\n", doc_id="d/p.md", site_url=SITE,
        version=None, layout=layout,
    )  # fmt: skip
    assert section.url == f"{SITE}d/p.html"
    assert section.text == f"[a]({SITE}b/index.html) [c]({SITE}d/c.html#x)"


# --- registry -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["a.md", "b/C.MD", "x.markdown", Path("docs/index.md")])
def test_markdown_parser_is_registered(path: str | Path) -> None:
    parser = parser_for(path)
    assert isinstance(parser, MarkdownParser)
    assert isinstance(parser, Parser)
    sections = parser.parse("# T\n", doc_id="a.md", site_url=SITE, version=None)
    assert sections[0].url == f"{SITE}a/"


@pytest.mark.parametrize("path", ["a.png", "Makefile", "a.md.bak"])
def test_unknown_suffix_has_no_parser(path: str) -> None:
    assert parser_for(path) is None


def test_supported_suffixes() -> None:
    assert {".md", ".markdown"} <= supported_suffixes()
