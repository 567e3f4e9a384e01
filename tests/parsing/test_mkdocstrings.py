"""The API reference: mkdocstrings directives expanded from the source, as the site has them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.errors import SourceError
from citewise.kb import parse_folder
from citewise.models import Section
from citewise.parsing.markdown import parse_markdown
from citewise.parsing.mkdocstrings import ApiOptions, ApiReference, has_directives
from citewise.sources.nav import folder_api_reference, read_site_config

SHARED_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
LGOS = SHARED_DATA / "lgos-docs-0.12.0"
SITE = "https://ilkersigirci.github.io/langgraph-openai-serve/"
VERSION = "0.12.0"
BASE = f"{SITE}{VERSION}/"
API_PREFIX = "reference/#langgraph_openai_serve"


def _require_lgos() -> Path:
    if not (LGOS / "src").is_dir():
        pytest.skip(f"LGOS 0.12.0 source not found at {(LGOS / 'src').resolve()}")
    return LGOS


@pytest.fixture(scope="module")
def lgos_sections() -> dict[str, Section]:
    """Every section of the LGOS docs folder, indexed as ``index_folder`` parses it."""
    docs = _require_lgos() / "docs"
    sections = parse_folder(docs, site_url=SITE, version=VERSION, api=folder_api_reference(docs))
    found: dict[str, Section] = {}
    for section in sections:
        location = section.url.removeprefix(BASE)
        assert location not in found, f"two sections share {section.url}"
        found[location] = section
    return found


def _published_api() -> dict[str, dict[str, object]]:
    index = _require_lgos() / "_site_gh-pages" / f"{VERSION}-search.json"
    items = json.loads(index.read_text(encoding="utf-8"))["items"]
    return {item["location"]: item for item in items if item["location"].startswith(API_PREFIX)}


def test_every_api_entry_matches_the_published_search_index(
    lgos_sections: dict[str, Section],
) -> None:
    published = _published_api()
    ours = {loc: s for loc, s in lgos_sections.items() if loc.startswith(API_PREFIX)}
    assert len(published) == 212
    assert sorted(set(ours) - set(published)) == [], "API entries the site does not have"
    assert sorted(set(published) - set(ours)) == [], "published API entries we did not render"
    for location, item in published.items():
        section = ours[location]
        # The site's title is the name, then labels as HTML (`build_input <small>…`); ours
        # is the name as the built page shows it: after a kind word, or called.
        name = str(item["title"]).split("<", 1)[0].strip()
        shown = (f"{name}()", f"class {name}", f"attribute {name}", f"module {name}")
        assert section.title in shown, location
        assert section.level == item["level"], location
        assert section.heading_path[0] == "Reference", location
        assert section.page == "reference/" and section.doc_id == "reference.md"


def test_markdown_sections_of_the_reference_page_are_unchanged(
    lgos_sections: dict[str, Section],
) -> None:
    # The 133 Markdown sections keep their URLs; only the directive line leaves the text.
    markdown = {loc for loc in lgos_sections if not loc.startswith(API_PREFIX)}
    assert len(markdown) == 133
    citation = lgos_sections["reference/#citation-events"].text
    assert ":::" not in citation
    assert citation.endswith(
        "direct runner consumers through `langgraph_openai_serve.graph.runner`."
    )


def test_an_api_section_has_signature_docstring_labels_and_source(
    lgos_sections: dict[str, Section],
) -> None:
    section = lgos_sections[f"{API_PREFIX}.GraphConfig.build_input"]
    assert section.url == f"{BASE}{API_PREFIX}.GraphConfig.build_input"
    assert section.title == "build_input()"
    assert section.heading_path == ("Reference", "class GraphConfig", "build_input()")
    assert section.level == 3
    assert "```python\nbuild_input(request, messages)\n```" in section.text
    assert "`async`" in section.text
    assert "Build the native graph input for a chat completion request." in section.text
    assert "Source code in `src/langgraph_openai_serve/graph/graph_registry.py`" in section.text


def test_classes_merge_init_and_keep_their_parameters_documented(
    lgos_sections: dict[str, Section],
) -> None:
    serve = lgos_sections[f"{API_PREFIX}.LanggraphOpenaiServe"]
    assert serve.title == "class LanggraphOpenaiServe"
    assert serve.text.startswith(
        "```python\nLanggraphOpenaiServe(graphs, app=None, checkpoint_scope=None)\n```"
    )
    config = lgos_sections[f"{API_PREFIX}.GraphConfig"]
    assert "Bases: `BaseModel`" in config.text
    get_graph = lgos_sections[f"{API_PREFIX}.GraphRegistry.get_graph"]
    assert "Args:" in get_graph.text and "name" in get_graph.text
    status = lgos_sections[f"{API_PREFIX}.status_event"]
    assert status.title == "status_event()"
    assert "status_event(description, *, done=False, hidden=False, namespace=())" in status.text


def test_objects_deeper_than_h6_join_the_section_above(
    lgos_sections: dict[str, Section],
) -> None:
    # The site has no heading (and no search entry) below h6: the methods stay in the class.
    builder = lgos_sections[
        f"{API_PREFIX}.api.chat.utils.responses.ChatCompletionStreamResponseBuilder"
    ]
    assert builder.level == 6
    assert "###### finish(" in builder.text


def test_site_config_reads_the_handler_and_its_options() -> None:
    root = _require_lgos()
    site = read_site_config(root / "zensical.toml")
    assert site.api_handler is not None and site.api_handler["paths"] == ["src"]
    api = folder_api_reference(root / "docs")
    assert api is not None
    assert api.paths == ((root / "src").resolve(),)
    assert api.options.show_submodules and api.options.merge_init_into_class
    assert api.options.docstring_style == "google"


def _package(tmp_path: Path) -> Path:
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        '"""A package."""\n\nfrom pkg.core import Widget\n\n__all__ = ["Widget"]\n'
    )
    (package / "core.py").write_text(
        '"""Core."""\n\n\nclass Widget:\n    """A widget.\n\n    Args:\n        size: how big.\n'
        '    """\n\n    def __init__(self, size: int = 1) -> None:\n        self.size = size\n\n'
        "    def grow(self, by: int, /, *more: int, fast: bool = False) -> None:\n"
        '        """Grow it."""\n\n    def _hidden(self) -> None:\n        """Private."""\n\n\n'
        "def undocumented():\n    pass\n"
    )
    return tmp_path


def test_directive_options_override_the_handler(tmp_path: Path) -> None:
    root = _package(tmp_path)
    api = ApiReference(paths=(root / "src",), root=root, options=ApiOptions(heading_level=2))
    page = "# API\n\n::: pkg.core.Widget\n    options:\n      show_root_heading: true\n"
    sections = api.expand(parse_markdown(page, doc_id="api.md", site_url="https://x.io/",
                                         version=None))  # fmt: skip
    assert [(s.anchor, s.title, s.level) for s in sections] == [
        ("", "API", 1),
        ("pkg.core.Widget", "class pkg.core.Widget", 2),
        ("pkg.core.Widget.grow", "grow()", 3),
    ]
    assert sections[1].url == "https://x.io/api/#pkg.core.Widget"
    assert sections[0].text == ""


def test_members_and_filters(tmp_path: Path) -> None:
    root = _package(tmp_path)
    api = ApiReference(paths=(root / "src",), root=root)
    everything = ApiOptions(show_submodules=True, merge_init_into_class=True)
    paths = [o.path for o in api.render("pkg", everything)]
    # The re-export is listed under the package (it is in __all__), private and
    # undocumented objects are not.
    assert paths == ["pkg.Widget", "pkg.Widget.grow", "pkg.core", "pkg.core.Widget",
                     "pkg.core.Widget.grow"]  # fmt: skip
    merged = api.render("pkg.core", everything)[0]
    assert merged.title == "class Widget"
    assert merged.text.startswith("```python\nWidget(size=1)\n```")
    listed = ApiOptions(members=("undocumented",), show_submodules=True)
    assert [o.path for o in api.render("pkg.core", listed)] == ["pkg.core.undocumented"]


def test_unknown_identifier_is_a_clear_error(tmp_path: Path) -> None:
    root = _package(tmp_path)
    api = ApiReference(paths=(root / "src",), root=root)
    with pytest.raises(SourceError, match="no object 'pkg.core.Gadget'"):
        api.render("pkg.core.Gadget")
    with pytest.raises(SourceError, match="package 'nothing' not found"):
        api.render("nothing.here")


def test_directives_in_code_are_text() -> None:
    assert has_directives("# A\n\n::: pkg.core\n")
    assert not has_directives("# A\n\n```\n::: pkg.core\n```\n")
    assert has_directives(".. autoclass:: Session\n")


def test_directive_naming_no_source_stays_and_is_reported(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n::: pkg\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: X\nplugins:\n  - mkdocstrings\n")
    api = folder_api_reference(tmp_path / "docs")
    assert api is not None and api.paths == (tmp_path.resolve(),)  # no src/: the project
    problems: dict[str, str] = {}
    sections = parse_markdown("# Home\n\n::: pkg\n", doc_id="index.md", site_url="", version=None)
    (section,) = api.expand(sections, problems)
    assert section.text == "::: pkg"
    assert "package 'pkg' not found" in problems["index.md#pkg"]
