"""The page URL form and the pages of a docs folder, read from the site's own configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.errors import ConfigurationError
from citewise.kb import parse_folder
from citewise.parsing.layout import SiteLayout
from citewise.sources.layout import detect_layout, docs_tree

SITES = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "sites"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def sphinx_project(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    write(
        tmp_path,
        {
            "docs/conf.py": "project = 'x'\n",
            "docs/index.rst": "Home\n====\n\nHi.\n",
            "docs/guide/usage.rst": "Usage\n=====\n\nText.\n\nMore\n----\n\nx\n",
            **(extra or {}),
        },
    )
    return tmp_path / "docs"


def test_sphinx_default_builder_is_html(tmp_path: Path) -> None:
    docs = sphinx_project(tmp_path)
    layout = detect_layout(docs)
    assert (layout.generator, layout.page_form, layout.detected_from) == (
        "sphinx",
        "html",
        "default",
    )
    urls = [s.url for s in parse_folder(docs, site_url="https://x.io/")]
    assert urls == [
        "https://x.io/guide/usage.html",
        "https://x.io/guide/usage.html#more",
        "https://x.io/",
    ]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            ".readthedocs.yaml",
            "version: 2\nsphinx:\n  configuration: docs/conf.py\n  builder: dirhtml\n",
        ),
        (
            ".readthedocs.yml",
            "version: 2\nbuild:\n  jobs:\n    build:\n      html:\n"
            "        - sphinx-build -W -b dirhtml docs $READTHEDOCS_OUTPUT/html\n",
        ),
        (
            "noxfile.py",
            'def docs(session):\n    session.run(\n        "sphinx-build",\n'
            '        "-b",\n        "dirhtml",\n        "docs",\n        "out",\n    )\n',
        ),
        ("tox.ini", "[testenv:docs]\ncommands = sphinx-build -b dirhtml docs docs/_build\n"),
    ],
)
def test_builder_read_from_build_configuration(tmp_path: Path, name: str, text: str) -> None:
    docs = sphinx_project(tmp_path, {name: text})
    layout = detect_layout(docs)
    assert (layout.page_form, layout.detected_from) == ("dirhtml", name)
    assert {s.page for s in parse_folder(docs)} == {"", "guide/usage/"}


def test_a_makefile_with_every_builder_says_nothing(tmp_path: Path) -> None:
    makefile = (
        "html:\n\t$(SPHINXBUILD) -b html . _build\ndirhtml:\n\t$(SPHINXBUILD) -b dirhtml . d\n"
    )
    docs = sphinx_project(tmp_path, {"docs/Makefile": makefile})
    assert detect_layout(docs).detected_from == "default"


def test_page_form_given_overrides_and_html_file_suffix(tmp_path: Path) -> None:
    docs = sphinx_project(tmp_path, {"docs/conf.py": "html_file_suffix = '.htm'\n"})
    assert {s.page for s in parse_folder(docs)} == {"", "guide/usage.htm"}
    assert {s.page for s in parse_folder(docs, page_form="dirhtml")} == {"", "guide/usage/"}
    with pytest.raises(ConfigurationError, match="unknown page form 'folders'"):
        detect_layout(docs, "folders")


def test_layout_round_trips_through_meta() -> None:
    layout = SiteLayout("sphinx", directory_urls=False, suffix=".htm")
    assert layout.to_meta() == "sphinx html .htm"
    back = SiteLayout.from_meta(layout.to_meta())
    assert (back.generator, back.directory_urls, back.suffix) == ("sphinx", False, ".htm")
    with pytest.raises(ConfigurationError):
        SiteLayout.from_meta("sphinx pages")


def test_mkdocs_use_directory_urls_false(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mkdocs.yml": "site_name: x\nuse_directory_urls: false\n",
            "docs/index.md": "# Home\n\nSee [usage](guide/usage.md#more).\n",
            "docs/guide/index.md": "# Guide\n",
            "docs/guide/usage.md": "# Usage\n\n## More\n",
        },
    )
    sections = {}
    for section in parse_folder(tmp_path / "docs", site_url="https://x.io/"):
        sections.setdefault(section.doc_id, section)
    assert sections["guide/usage.md"].url == "https://x.io/guide/usage.html"
    assert sections["guide/index.md"].url == "https://x.io/guide/index.html"
    assert sections["index.md"].url == "https://x.io/index.html"  # as MkDocs links it
    assert "(https://x.io/guide/usage.html#more)" in sections["index.md"].text


def test_sphinx_source_folder_exclusions_and_myst(tmp_path: Path) -> None:
    conf = (
        "extensions = ['myst_parser']\ntemplates_path = ['_templates']\n"
        "exclude_patterns = ['drafts/*']\nhtml_static_path = ['_static']\n"
    )
    write(
        tmp_path,
        {
            "docs/source/conf.py": conf,
            "docs/Makefile": "all:\n",
            "docs/source/index.rst": "Home\n====\n",
            "docs/source/notes.md": "# Notes\n\n(tips)=\n## Some tips\n\nText.\n",
            "docs/source/drafts/wip.md": "# WIP\n",
            "docs/source/_templates/page.html": "<html>{{ body }}</html>",
            "docs/source/_static/extra.md": "# Static\n",
        },
    )
    tree = docs_tree(tmp_path / "docs")
    assert tree.source_dir == tmp_path / "docs" / "source"
    assert tree.project_root == tmp_path
    found = {s.url for s in parse_folder(tmp_path / "docs")}
    # The label is an id of the section too; its title's id comes first, as in Sphinx.
    assert found == {"", "notes.html", "notes.html#some-tips"}


def test_mkdocs_theme_custom_dir_is_not_pages(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "mkdocs.yml": "site_name: x\ntheme:\n  name: material\n  custom_dir: docs/overrides\n"
            "exclude_docs: |\n  secret.md\n",
            "docs/index.md": "# Home\n",
            "docs/overrides/main.html": "{% extends 'base.html' %}",
            "docs/secret.md": "# Secret\n",
            "docs/templates/t.md": "# T\n",
            "docs/README.md": "# Readme\n",
        },
    )
    assert {s.doc_id for s in parse_folder(tmp_path / "docs")} == {"index.md"}


@pytest.mark.parametrize("site", ["click-8.5.0", "starlette-0.47.3"])
def test_real_sites_layouts(site: str) -> None:
    docs = SITES / site / "docs"
    if not docs.is_dir():
        pytest.skip(f"shared data not found at {docs.resolve()}")
    layout = detect_layout(docs)
    expected = {
        "click-8.5.0": ("sphinx", "dirhtml", ".readthedocs.yaml"),
        "starlette-0.47.3": ("mkdocs", "dirhtml", "mkdocs.yml"),
    }
    assert (layout.generator, layout.page_form, layout.detected_from) == expected[site]
