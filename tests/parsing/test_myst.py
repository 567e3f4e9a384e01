"""MyST pages of a Sphinx site: sections at docutils' ids, Sphinx directives understood."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.kb import parse_folder
from citewise.models import Section
from citewise.parsing.base import parser_for
from citewise.parsing.layout import SiteLayout
from citewise.parsing.myst import parse_myst
from citewise.sources.nav import folder_api_reference

SITES = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "sites"
SPHINX = SiteLayout("sphinx", directory_urls=True)


def parse(text: str, layout: SiteLayout = SPHINX) -> list[Section]:
    return parse_myst(
        text, doc_id="guide/page.md", site_url="https://x.io/", version=None, layout=layout
    )


def test_sections_take_docutils_ids_and_labels() -> None:
    text = (
        "# Page Title\n\nIntro.\n\n## Setting a Default\n\nBody.\n\n(tuple-type)=\n"
        "## Multi Value: Tuples\n\nMore.\n\n## Setting a Default\n\nAgain.\n"
    )
    sections = parse(text)
    assert [s.url for s in sections] == [
        "https://x.io/guide/page/",
        "https://x.io/guide/page/#setting-a-default",
        # The title's id; the label ``tuple-type`` is an id of the same section too.
        "https://x.io/guide/page/#multi-value-tuples",
        "https://x.io/guide/page/#id1",
    ]
    assert sections[0].text == "Intro."
    assert sections[2].heading_path == ("Page Title", "Multi Value: Tuples")


def test_sphinx_directives_and_eval_rst_yield_api_markers() -> None:
    text = (
        "# API\n\n```{eval-rst}\n.. autoclass:: pkg.Widget\n   :members:\n```\n\n"
        "```{autofunction} pkg.helper\n```\n\n```{code-block} python\nx = 1\n```\n\n"
        ":::{note}\nA colon fence.\n:::\n"
    )
    layout = SiteLayout("sphinx", myst_extensions=("colon_fence", "no_such_extension"))
    (section,) = parse(text, layout)
    assert "::: pkg.Widget\n" in section.text
    assert "::: pkg.helper\n" in section.text
    assert "```python\nx = 1\n```" in section.text
    assert "Note: A colon fence." in section.text


def test_markdown_parser_reads_myst_in_a_sphinx_site() -> None:
    parser = parser_for("a.md")
    assert parser is not None and getattr(parser, "site_layout", False)
    plain = parser.parse("# T\n\n## Sub Part\n", doc_id="a.md", site_url="", version=None)
    assert [s.url for s in plain] == ["a/", "a/#sub-part"]


def test_click_sections_exist_on_the_built_site() -> None:
    docs = SITES / "click-8.5.0" / "docs"
    truth_path = SITES / "click-8.5.0" / "_site-truth.json"
    if not truth_path.is_file():
        pytest.skip("click 8.5.0 not found (shared data absent)")
    import json

    truth = json.loads(truth_path.read_text(encoding="utf-8"))["pages"]
    sections = [
        s for s in parse_folder(docs, api=folder_api_reference(docs)) if s.doc_id != "api.md"
    ]
    assert {s.page for s in sections} <= set(truth)
    broken = [s.url for s in sections if s.anchor and s.anchor not in truth[s.page]["all_ids"]]
    assert broken == []
    cited = {(s.page, s.anchor) for s in sections}
    missed = [
        (page, section["ids"])
        for page, info in truth.items()
        if page != "api/"
        for number, section in enumerate(info["sections"])
        if not any((page, i) in cited for i in section["ids"])
        and not (number == 0 and (page, "") in cited)
    ]
    assert missed == []
