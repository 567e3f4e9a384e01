"""Included content is part of the including page, resolved safely inside the project."""

from __future__ import annotations

from pathlib import Path

from citewise.kb import parse_folder
from citewise.kb.ingest import folder_items
from citewise.sources.layout import docs_tree

SITES = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "sites"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def texts(docs: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for section in parse_folder(docs):
        found[section.url] = section.text
    return found


def test_rst_include_and_literalinclude(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "CHANGES.rst": "Changes\n=======\n\nVersion 2\n---------\n\nFixed it.\n",
            "example.py": "# head\nprint('hi')\n# tail\n",
            "docs/conf.py": "",
            "docs/changes.rst": ".. include:: ../CHANGES.rst\n",
            "docs/code.rst": "Code\n====\n\n.. literalinclude:: ../example.py\n"
            "   :language: python\n   :lines: 2\n",
        },
    )
    found = texts(tmp_path / "docs")
    assert found["changes.html#version-2"] == "Fixed it."
    assert found["code.html"] == "```python\nprint('hi')\n```"


def test_myst_include_with_markers(tmp_path: Path) -> None:
    changes = "# Changes\n\n<!-- start -->\n## Version 2\n\nFixed it.\n<!-- end -->\n\n## Old\n"
    write(
        tmp_path,
        {
            "CHANGES.md": changes,
            "docs/conf.py": "extensions = ['myst_parser']\n",
            "docs/changes.md": "# Changelog\n\n```{include} ../CHANGES.md\n"
            ":start-after: <!-- start -->\n:end-before: <!-- end -->\n```\n",
        },
    )
    found = texts(tmp_path / "docs")
    assert found["changes.html#version-2"] == "Fixed it."
    assert not any("old" in url for url in found)


def test_snippets_lines_sections_and_base_path(tmp_path: Path) -> None:
    config = (
        "site_name: x\nmarkdown_extensions:\n  - pymdownx.snippets:\n      base_path: [snippets]\n"
    )
    part = "one\n# --8<-- [start:usage]\nuse it\n# --8<-- [end:usage]\nthree\n"
    write(
        tmp_path,
        {
            "mkdocs.yml": config,
            "snippets/part.txt": part,
            "docs/index.md": '# Home\n\n--8<-- "part.txt:usage"\n\n'
            '    --8<-- "part.txt:1:1"\n\n;--8<-- "kept.txt"\n',
        },
    )
    assert texts(tmp_path / "docs")[""] == 'use it\n\n    one\n\n--8<-- "kept.txt"'


def test_an_include_outside_the_project_or_missing_is_reported(tmp_path: Path) -> None:
    write(tmp_path / "outside", {"secret.rst": "Secret\n======\n\nhush\n"})
    project = write(
        tmp_path / "project",
        {
            "docs/conf.py": "",
            "docs/index.rst": "Home\n====\n\n.. include:: ../../outside/secret.rst\n\n"
            ".. include:: missing.rst\n\nText.\n",
        },
    )
    skipped: dict[str, str] = {}
    items = folder_items(project / "docs", max_chars=0, skipped=skipped)
    (section,) = items[0].sections()
    assert section.text == "Text."
    assert skipped["index.rst (include ../../outside/secret.rst)"] == (
        "outside the project folder: not read"
    )
    assert skipped["index.rst (include missing.rst)"] == "included file not found"


def test_a_changed_include_changes_the_fingerprint(tmp_path: Path) -> None:
    project = write(
        tmp_path,
        {
            "docs/conf.py": "",
            "part.rst": "one\n",
            "docs/index.rst": "Home\n====\n\n.. include:: ../part.rst\n",
        },
    )
    before = folder_items(project / "docs", max_chars=0)[0].fingerprint
    (project / "part.rst").write_text("two\n", encoding="utf-8")
    after = folder_items(project / "docs", max_chars=0, tree=docs_tree(project / "docs"))
    assert after[0].fingerprint != before
    assert after[0].sections()[0].text == "two"


def test_click_changelog_is_indexed() -> None:
    docs = SITES / "click-8.5.0" / "docs"
    if not docs.is_dir():
        return
    changes = [s for s in parse_folder(docs) if s.doc_id == "changes.md"]
    assert {s.page for s in changes} == {"changes/"}
    assert "Version 8.5.0" in [s.title for s in changes]


def test_an_include_shown_as_an_example_stays_text(tmp_path: Path) -> None:
    page = (
        "Howto\n=====\n\nWrite this::\n\n   .. include:: part.rst\n\n"
        ".. code-block:: rst\n\n   .. include:: part.rst\n\nDone.\n"
    )
    write(tmp_path, {"pyproject.toml": "", "docs/conf.py": "", "docs/howto.rst": page})
    skipped: dict[str, str] = {}
    (item,) = folder_items(tmp_path / "docs", max_chars=0, skipped=skipped)
    assert item.sections()[0].text.count(".. include:: part.rst") == 2
    assert not [key for key in skipped if "include" in key]


def test_docs_source_given_directly_keeps_the_project_root(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "",
            "CHANGES.rst": "Changes\n=======\n\nAll.\n",
            "docs/Makefile": "",
            "docs/source/conf.py": "",
            "docs/source/changes.rst": ".. include:: ../../CHANGES.rst\n",
        },
    )
    assert docs_tree(tmp_path / "docs" / "source").project_root == tmp_path
    assert texts(tmp_path / "docs" / "source") == {"changes.html": "All."}
