"""conf.py settings read as literals, never by running the file."""

from __future__ import annotations

from pathlib import Path

from citewise.sources.sphinx_conf import find_sphinx_conf, read_sphinx_conf, sphinx_settings
from tests.conftest import SHARED_DATA


def test_literal_settings_are_read_and_computed_ones_left_out() -> None:
    settings = sphinx_settings(
        "import os\n"
        "from pallets_sphinx_themes import get_version\n"
        "project = 'Click'\n"
        "release, version = get_version('Click')\n"
        "extensions = ['sphinx.ext.autodoc']\n"
        "extensions += ['myst_parser']\n"
        "extensions.append('sphinx_tabs.tabs')\n"
        "source_suffix: dict[str, str] = {'.rst': 'restructuredtext', '.md': 'markdown'}\n"
        "html_theme = os.environ.get('THEME', 'alabaster')\n"
        "autodoc_default_options = {'members': True, 'special-members': '__init__'}\n"
    )
    assert settings["project"] == "Click"
    assert settings["extensions"] == ["sphinx.ext.autodoc", "myst_parser", "sphinx_tabs.tabs"]
    assert settings["source_suffix"] == {".rst": "restructuredtext", ".md": "markdown"}
    assert settings["autodoc_default_options"]["special-members"] == "__init__"
    assert "version" not in settings and "html_theme" not in settings


def test_a_file_that_does_not_parse_has_no_settings(tmp_path: Path) -> None:
    conf = tmp_path / "conf.py"
    conf.write_text("extensions = [\n", encoding="utf-8")
    assert read_sphinx_conf(conf) == {}
    assert sphinx_settings("import sys; sys.exit(1)") == {}


def test_conf_is_found_at_the_root_or_in_source(tmp_path: Path) -> None:
    assert find_sphinx_conf(tmp_path) is None
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / "conf.py").write_text("project = 'x'\n", encoding="utf-8")
    assert find_sphinx_conf(tmp_path) == tmp_path / "source" / "conf.py"
    (tmp_path / "conf.py").write_text("project = 'y'\n", encoding="utf-8")
    assert find_sphinx_conf(tmp_path) == tmp_path / "conf.py"


def test_the_click_release_names_myst() -> None:
    conf = SHARED_DATA / "sites" / "click-8.5.0" / "docs" / "conf.py"
    if not conf.is_file():
        import pytest

        pytest.skip(f"shared data not found at {conf}")
    settings = read_sphinx_conf(conf)
    assert "myst_parser" in settings["extensions"]
    assert settings["autodoc_member_order"] == "bysource"
