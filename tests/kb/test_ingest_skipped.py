"""Never silent: every file an index run leaves out is named with the reason."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.embedding.base import Embedder
from citewise.kb import KnowledgeBase


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


SPHINX = {
    "docs/conf.py": "project = 'widgets'\n",
    "docs/index.rst": "Widgets\n=======\n\nIntro.\n\n.. toctree::\n\n   api\n",
    "docs/api.rst": "API\n===\n\n.. module:: widgets\n\n.. autofunction:: spin\n",
    "docs/Makefile": "html:\n\tsphinx-build . _build\n",
    "docs/_static/custom.css": "body {}\n",
    "docs/notes.md": "# Notes\n",
    "docs/_build/html/index.html": "<html></html>\n",
    "src/widgets/__init__.py": '"""Widgets."""\n\n\ndef spin(speed: int = 1) -> None:\n'
    '    """Spin the widget.\n\n    :param speed: turns per second.\n    """\n',
}


def test_sphinx_folder_reads_rst_expands_autodoc_and_names_the_rest(
    tmp_path: Path, minilm: Embedder
) -> None:
    docs = write(tmp_path, SPHINX) / "docs"
    kb = KnowledgeBase("widgets", settings=Settings(home=tmp_path / "home"), embedder=minilm)
    report = kb.index_folder(docs, site_url="https://widgets.readthedocs.io/en/", version="latest")
    assert sorted(report.added) == ["api.rst", "index.rst"]
    assert report.skipped == {
        "Makefile": "no parser for files without a suffix",
        "_static/custom.css": "no parser for .css",
        "conf.py": "no parser for .py",
        "notes.md": "not a Sphinx source (.md; the site is built from .rst)",
    }
    assert "4 skipped" in report.summary()
    hits = kb.search("spin the widget turns per second", top_k=1)
    # Nothing names a builder (the Makefile runs sphinx-build without -b): Sphinx's html.
    assert hits[0].url == "https://widgets.readthedocs.io/en/latest/api.html#widgets.spin"
    assert hits[0].chunk.title == "widgets.spin()"  # as the built page titles it (html_api)
    assert kb.meta()["site_layout"] == "sphinx html"


def test_unexpanded_directive_is_reported(tmp_path: Path, minilm: Embedder) -> None:
    files = {
        "mkdocs.yml": "site_name: W\nplugins:\n  - mkdocstrings:\n      handlers:\n"
        "        python:\n          paths: [src]\n",
        "docs/index.md": "# Home\n\n::: widgets.missing\n",
        "docs/logo.png": "not really a png\n",
        "src/widgets/__init__.py": '"""Widgets."""\n',
    }
    docs = write(tmp_path, files) / "docs"
    kb = KnowledgeBase("w", settings=Settings(home=tmp_path / "home"), embedder=minilm)
    report = kb.index_folder(docs)
    assert report.skipped["logo.png"] == "no parser for .png"
    assert "no object 'widgets.missing'" in report.skipped["index.md#widgets.missing"]


def test_cli_prints_each_skipped_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from citewise.cli import main

    docs = write(tmp_path, {"docs/index.md": "# Home\n\nHello.\n", "docs/a.bin": "x\n"}) / "docs"
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["index", str(docs), "-q"])
    assert code == 0
    lines = out.getvalue().splitlines()
    assert "1 skipped" in lines[0]
    assert lines[1] == "skipped a.bin: no parser for .bin"


def test_a_changed_docstring_reindexes_only_the_pages_that_render_it(
    tmp_path: Path, minilm: Embedder
) -> None:
    docs = write(tmp_path, SPHINX) / "docs"
    kb = KnowledgeBase("widgets", settings=Settings(home=tmp_path / "home"), embedder=minilm)
    kb.index_folder(docs)
    source = tmp_path / "src" / "widgets" / "__init__.py"
    source.write_text(source.read_text().replace("Spin the widget.", "Spin the widget fast."))
    again = kb.index_folder(docs)
    assert (again.updated, again.unchanged) == (["api.rst"], ["index.rst"])
    assert "Spin the widget fast." in kb.search("spin fast", top_k=1)[0].chunk.text
