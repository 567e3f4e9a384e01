"""Sphinx's API entries (autodoc and hand-written Python-domain directives) at the ids a real
Sphinx build gives them: a small project is built with sphinx-build and its objects.inv is the
truth."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from citewise.kb import parse_folder
from citewise.models import Section
from citewise.parsing.rst import parse_rst
from citewise.parsing.sphinx_api import autodoc_marker
from citewise.sources.nav import folder_api_reference

PACKAGE = {
    "shapes/__init__.py": '''
"""Shapes."""
from shapes.base import Shape, _helper
from shapes.circle import Circle
from shapes import lazy as _lazy

__all__ = ["Shape", "Circle", "area", "UNIT"]

#: The unit every length is in.
UNIT = "cm"

def area(shape):
    """The area of a shape."""

def not_exported():
    """Left out: not in __all__."""

def __getattr__(name):
    if name == "OldShape":
        from .base import _OldShape
        return _OldShape
    raise AttributeError(name)
''',
    "shapes/base.py": '''
"""Base shapes."""

class Shape:
    """A shape.

    Attributes:
        sides (int): How many sides it has.
    """

    #: The colour it is drawn in.
    colour = "black"
    undocumented = 1
    _private = 2

    def __init__(self, name):
        """Make a shape called ``name``."""
        self.name = name  #: The shape's name.

    def __eq__(self, other):
        """Equal shapes."""

    def __hash__(self):
        return 0

    def draw(self):
        """Draw it."""

    def _secret(self):
        """A private method."""

    def bare(self):
        pass

class _OldShape(Shape):
    """The old name of a shape."""

def _helper():
    """A private helper."""

class ShapeError(ValueError):
    """A shape is wrong."""

class Frozen:
    """A class a decorator-like call rebinds."""

    def thaw(self):
        """Thaw it."""

def _keep(cls):
    return cls

Frozen = _keep(Frozen)
''',
    "shapes/circle.py": '''
"""Circles."""
from shapes.base import Shape

class Circle(Shape):
    """A circle."""

    colour = "red"

    def draw(self):
        pass

    def roll(self):
        """Roll it."""
''',
    "shapes/lazy.py": '"""Nothing here."""\n',
    "shapes/brushes.py": '''
"""Brushes, built on another distribution's."""
from paints import Brush

class FineBrush(Brush):
    """A fine brush."""

    def stroke(self):
        """One fine stroke."""
''',
}
# Another distribution, installed beside the release (a site-packages): it is read for the
# bases the release's classes inherit from it, never for the release's own modules.
DEPENDENCY = {
    "paints/__init__.py": '''
"""Paints."""

class _Accessor:
    def __init__(self, key, doc=None):
        self.key = key
        self.__doc__ = doc

    def __get__(self, obj, owner=None):
        return self if obj is None else obj.__dict__.get(self.key)

    def __set__(self, obj, value):
        obj.__dict__[self.key] = value

    def __delete__(self, obj):
        del obj.__dict__[self.key]

class Brush:
    """A brush."""

    #: What it paints on.
    surface: str

    width = _Accessor("width", doc="""How wide it is,
    in millimetres.""")

    def __init__(self, surface):
        self.surface = surface

    def dip(self, colour):
        """Dip it in a colour."""
''',
    # A stale installed copy of the release itself: never read in place of its source.
    "shapes/__init__.py": '"""An installed copy."""\n\ndef stale():\n    """Stale."""\n',
}
CONF = """
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
autodoc_default_options = {"member-order": "bysource"}
autoclass_content = "both"
"""
PAGES = {
    "index.rst": """
Shapes
======

.. toctree::

   api
   manual

.. automodule:: shapes
   :members:
""",
    "api.rst": """
API
===

.. currentmodule:: shapes.base

.. autoclass:: Shape
   :members:
   :special-members: __eq__
   :private-members:
   :undoc-members:

.. autoexception:: ShapeError
   :members:
   :inherited-members:

.. autoclass:: shapes.circle.Circle
   :members:
   :inherited-members:
   :exclude-members: bare

.. autoclass:: Frozen
   :members:

.. autofunction:: _helper

.. autoclass:: shapes.OldShape
   :members:

.. autoclass:: shapes.brushes.FineBrush
   :members:
   :inherited-members:
""",
    "manual.rst": """
Manual
======

.. module:: drawing

Drawing things.

.. class:: Canvas(width, height)

   A canvas.

   .. attribute:: width

      Its width.

   .. method:: paint(colour)

      Paint it.

   .. py:classmethod:: blank()

      A blank one.

.. function:: render(canvas) -> bytes

   Render it.

.. py:data:: DEFAULT_SIZE
   :value: 10

   The default size.

.. py:function:: hidden()
   :no-index:

   Not indexed.

.. currentmodule:: drawing.tools

.. exception:: DrawError

   A drawing failed.

.. method:: Pen.draw(line)

   Draw a line.
""",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"), encoding="utf-8")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shapes")
    (root / "pyproject.toml").write_text('[project]\nname = "shapes"\n', encoding="utf-8")
    _write(root / "src", PACKAGE)
    _write(root / "site-packages", DEPENDENCY)
    _write(root / "docs" / "source", {"conf.py": CONF, **PAGES})
    return root


@pytest.fixture(scope="module")
def built(project: Path) -> set[str]:
    """The Python objects of the Sphinx build's objects.inv, as ``page#anchor``."""
    pytest.importorskip("sphinx", reason="the Sphinx build needs sphinx (the dev extra)")
    out = project / "_build"
    env = {**os.environ, "PYTHONPATH": f"{project / 'src'}{os.pathsep}{project / 'site-packages'}"}
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "dirhtml", str(project / "docs" / "source"),
         str(out), "-d", str(project / "_doctrees")],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"sphinx-build could not run: {done.stderr[-500:]}")
    lines = (out / "objects.inv").read_bytes().split(b"\n", 4)
    found = set()
    for line in zlib.decompress(lines[4]).decode().splitlines():
        name, role, _priority, uri = line.split(" ", 4)[:4]
        if role.startswith("py:"):
            found.add(uri.replace("$", name))
    return found


@pytest.fixture(scope="module")
def ours(project: Path) -> dict[str, Section]:
    # The docs folder is docs/source: the source is found at the project root's src/.
    docs = project / "docs" / "source"
    api = folder_api_reference(docs, dependencies=(project / "site-packages",))
    assert api is not None and api.paths == ((project / "src").resolve(),)
    # The build above is dirhtml; the project names no builder, so say it as a user would.
    sections = parse_folder(docs, site_url="", version=None, api=api, page_form="dirhtml")
    return {s.url: s for s in sections}


def test_every_api_entry_matches_the_sphinx_build(
    built: set[str], ours: dict[str, Section]
) -> None:
    # Every page has one title (its bare URL): every other id is an API entry.
    api = {url for url in ours if "#" in url}
    assert sorted(api - built) == [], "API entries the build does not have"
    assert sorted(built - api) == [], "API entries of the build we did not render"


def test_the_rules_behind_the_entries(ours: dict[str, Section]) -> None:
    urls = {url.split("#", 1)[1] for url in ours if "#" in url}
    # __all__ decides a module's members; a `#:` comment documents an attribute.
    assert {"shapes.area", "shapes.UNIT", "shapes.Circle"} <= urls
    assert "shapes.not_exported" not in urls
    # Named special members, private and undocumented members when asked.
    assert {"shapes.base.Shape.__eq__", "shapes.base.Shape._secret",
            "shapes.base.Shape.undocumented"} <= urls  # fmt: skip
    assert "shapes.base.Shape.__hash__" not in urls
    # Inherited members, one excluded; a base's documented attribute documents an override.
    assert {"shapes.circle.Circle.colour", "shapes.circle.Circle.draw"} <= urls
    assert "shapes.circle.Circle.bare" not in urls
    # Members of a builtin base (ValueError), without source.
    assert "shapes.base.ShapeError.with_traceback" in urls
    # napoleon's Attributes section; an instance attribute's inline `#:` comment.
    assert {"shapes.base.Shape.sides", "shapes.base.Shape.name"} <= urls
    # A name a module's __getattr__ returns: an alias, without members.
    assert "shapes.OldShape" in urls and "shapes.OldShape.draw" not in urls
    # Hand-written objects, nested in a class, under the current module; :no-index: has none.
    assert {"module-drawing", "drawing.Canvas", "drawing.Canvas.width",
            "drawing.Canvas.paint", "drawing.Canvas.blank", "drawing.render",
            "drawing.DEFAULT_SIZE", "drawing.tools.DrawError",
            "drawing.tools.Pen.draw"} <= urls  # fmt: skip
    assert "drawing.hidden" not in urls
    shape = next(s for url, s in ours.items() if url.endswith("#shapes.base.Shape"))
    # autoclass_content = "both": the class docstring, then __init__'s.
    assert "A shape." in shape.text and "Make a shape called" in shape.text
    paint = next(s for url, s in ours.items() if url.endswith("#drawing.Canvas.paint"))
    # Titled as the built page shows it; the signature opens the body.
    assert paint.title == "paint()" and paint.text == "```python\npaint(colour)\n```\n\nPaint it."
    assert paint.heading_path[-2:] == ("class drawing.Canvas", "paint()")
    hidden = next(s for url, s in ours.items() if url.endswith("#drawing.DEFAULT_SIZE"))
    assert "**drawing.hidden()**\n\n```python\nhidden()\n```" in hidden.text
    assert "Not indexed." in hidden.text


def test_bases_from_another_distribution_are_read_where_it_is_installed(
    project: Path, ours: dict[str, Section]
) -> None:
    urls = {url.split("#", 1)[1]: s for url, s in ours.items() if "#" in url}
    # Inherited from the installed dependency: a method, a class-level `#:` comment (griffe
    # keeps the line of `self.surface = ...` in __init__), a descriptor's `doc=`.
    assert {"shapes.brushes.FineBrush.dip", "shapes.brushes.FineBrush.surface",
            "shapes.brushes.FineBrush.width"} <= set(urls)  # fmt: skip
    assert "What it paints on." in urls["shapes.brushes.FineBrush.surface"].text
    assert "How wide it is,\nin millimetres." in urls["shapes.brushes.FineBrush.width"].text
    # The release's own package comes from its source, never the installed copy.
    assert "shapes.stale" not in urls and "shapes.area" in urls
    # Without the dependency's folder its members stay unknown, the class's own are kept.
    docs = project / "docs" / "source"
    alone = parse_folder(docs, site_url="", version=None, api=folder_api_reference(docs),
                         page_form="dirhtml")  # fmt: skip
    anchors = {s.anchor for s in alone}
    assert "shapes.brushes.FineBrush.stroke" in anchors
    assert "shapes.brushes.FineBrush.dip" not in anchors


def test_the_source_is_the_release_never_an_importable_module(tmp_path: Path) -> None:
    """A package installed beside citewise (yaml) is not documented from there."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    (tmp_path / "src" / "mine").mkdir(parents=True)
    (tmp_path / "src" / "mine" / "__init__.py").write_text('"""Mine."""\n', encoding="utf-8")
    docs = tmp_path / "docs"
    _write(docs, {"conf.py": "extensions = ['sphinx.ext.autodoc']\n",
                  "index.rst": "Top\n===\n\n.. autoclass:: yaml.YAMLObject\n"})  # fmt: skip
    api = folder_api_reference(docs)
    assert api is not None
    problems: dict[str, str] = {}
    sections = api.expand(parse_folder(docs, site_url="", version=None), problems)
    assert not any("yaml.YAMLObject" in s.anchor for s in sections)
    assert (
        "index.rst#yaml.YAMLObject" in problems
        and "not found" in problems["index.rst#yaml.YAMLObject"]
    )


def test_marker_paths_follow_autodoc() -> None:
    state = {"module": ""}
    assert autodoc_marker("currentmodule", "pkg", {}, state, 1) == []
    marker = autodoc_marker("autoclass", "Session", {"members": "a, b"}, state, 2)[0]
    assert marker.startswith("::: pkg.Session\n    {options: {autodoc: autoclass")
    assert "members: 'a, b'" in marker and "heading_level: 3" in marker
    assert autodoc_marker("automethod", "Session.get", {}, state, 1)[0].startswith(
        "::: pkg.Session.get\n"
    )
    assert autodoc_marker("autofunction", "other.func", {}, state, 1)[0].startswith(
        "::: other.func\n"
    )
    assert autodoc_marker("autoclass", "X", {"module": "mod"}, state, 1)[0].startswith(
        "::: mod.X\n"
    )


def test_hand_written_objects_parse_without_a_source() -> None:
    text = (
        "Guide\n=====\n\n.. module:: lib\n\n.. class:: Thing(a: int, b: list[str])\n\n"
        "   A thing.\n\n   Notes\n   -----\n\n   Careful.\n\n   .. attribute:: size\n"
        "      :type: int\n\n      Its size.\n"
    )
    sections = parse_rst(text, doc_id="guide.rst", site_url="https://x/", version=None)
    assert [s.anchor for s in sections] == ["", "module-lib", "lib.Thing", "lib.Thing.size"]
    assert "Careful." in sections[2].text
