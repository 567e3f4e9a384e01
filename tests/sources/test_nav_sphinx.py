"""Scopes of a Sphinx folder: the root document's toctrees, under their section titles."""

from __future__ import annotations

from pathlib import Path

from citewise.sources.nav import folder_nav_scopes, sphinx_nav

INDEX = """\
Widgets
=======

.. toctree::
   :maxdepth: 2

   intro

User Guide
----------

.. toctree::

   user/install
   Quick start <user/quickstart>

.. toctree::
   :maxdepth: 1

   user/advanced

API
---

.. toctree::

   api
   https://example.com/elsewhere
"""


def write(root: Path, *, conf: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "index.rst").write_text(INDEX, encoding="utf-8")
    if conf:
        (root / "conf.py").write_text("project = 'w'\n", encoding="utf-8")
    return root


def test_toctrees_become_nav_sections(tmp_path: Path) -> None:
    nav = sphinx_nav(write(tmp_path / "docs"))
    assert nav is not None
    assert [(s.title, s.pages) for s in nav.sections] == [
        ("Widgets", ("intro.rst",)),
        ("User Guide", ("user/install.rst", "user/quickstart.rst", "user/advanced.rst")),
        ("API", ("api.rst",)),
    ]


def test_folder_scopes_follow_the_toctree(tmp_path: Path) -> None:
    scopes = folder_nav_scopes(write(tmp_path / "docs"))
    assert scopes is not None
    assert scopes.scope_of("user/quickstart.rst") == "user library"
    assert scopes.scope_of("api.rst") == "api library"
    assert scopes.scope_of("index.rst") == "library"


def test_no_conf_py_is_no_sphinx_nav(tmp_path: Path) -> None:
    assert sphinx_nav(write(tmp_path / "docs", conf=False)) is None
