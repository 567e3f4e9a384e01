"""Titles of API entries rendered from the source, as the built site shows them.

The HTML parsers title an object by the name on the page after a kind word or followed by
``()`` (:func:`citewise.parsing.html_api.title_for`): ``class requests.adapters.HTTPAdapter``,
``mount()``, ``attribute auth``. The source side names objects the same way, so a release
indexed from its source and from its built site gives an object the same title, and the
signature goes to the body as a code block instead of the title.

Sphinx (autodoc) shows an object outside a class under its dotted path (``add_module_names``)
and a class member by its name; it words an exception ``exception``, a property ``property``
and a module-level variable ``data``. mkdocstrings shows the directive's root object under its
full path (``show_root_full_path``) and members by their names; a property is an attribute.
"""

from __future__ import annotations

import builtins
from typing import Any

from citewise.parsing.autodoc_docs import class_bases
from citewise.parsing.griffe_objects import kind_of, labels_of
from citewise.parsing.html_api import title_for

__all__ = ["is_exception", "source_title"]

# The kind each autodoc directive documents its object as (``automodule`` aside).
_DIRECTIVE_WORDS = {"autoclass": "class", "autoexception": "exception", "autodata": "data",
                    "autoattribute": "attribute", "autoproperty": "property",
                    "automethod": "method", "autofunction": "function",
                    "autodecorator": "decorator"}  # fmt: skip

# An exception base outside the source and the builtins, known by its name (urllib3's
# ``HTTPError``, ``json.JSONDecodeError``).
_EXCEPTION_SUFFIXES = ("Error", "Exception", "Warning", "Exit", "Interrupt")


def source_title(obj: Any, path: str, *, root: bool, autodoc: str = "") -> str:
    """The title of ``obj`` documented at ``path`` (``module-pkg.mod`` for a Sphinx module);
    ``root`` when it is the object its directive names, ``autodoc`` that directive
    (``autoclass``…) on a Sphinx site, "" for mkdocstrings."""
    dotted = path.removeprefix("module-")
    kind = kind_of(obj)
    if kind == "module":
        return title_for("module", dotted if root or autodoc else obj.name, path)
    in_class = not root and not _parent_is_module(obj)
    # Sphinx: a class member by its name; mkdocstrings: every member by its name.
    shown = dotted if root or (autodoc and not in_class) else obj.name
    word = _kind_word(obj, kind, in_class=in_class, sphinx=bool(autodoc))
    if root and autodoc in _DIRECTIVE_WORDS:
        # The directive chooses the documenter; a non-class is shown as an alias attribute.
        word = _DIRECTIVE_WORDS[autodoc]
        if autodoc in ("autoclass", "autoexception") and kind != "class":
            word = "attribute"
    return title_for(word, shown, path)


def _kind_word(obj: Any, kind: str, *, in_class: bool, sphinx: bool) -> str:
    labels = labels_of(obj)
    if kind == "class":
        return "exception" if sphinx and is_exception(obj) else "class"
    if kind == "function":
        return "property" if sphinx and "property" in labels else "function"
    if kind == "attribute":
        if sphinx and "property" in labels:
            return "property"
        return "data" if sphinx and not in_class else "attribute"
    return kind  # a type alias: its bare name


def _parent_is_module(obj: Any) -> bool:
    """True for an object defined (or imported) in a module; a member a class gets from a
    docstring or a builtin base has no parent and is a class member."""
    parent = getattr(obj, "parent", None)
    return parent is not None and kind_of(parent) == "module"


def is_exception(cls: Any, depth: int = 0) -> bool:
    """Whether a class derives from ``BaseException`` (autodoc documents it as an exception),
    through its bases in the source, the builtins, or a base named like one."""
    if depth > 20:
        return False
    for base in class_bases(cls):
        if isinstance(base, str):
            name = base.rsplit(".", 1)[-1]
            found = getattr(builtins, name, None)
            if isinstance(found, type):
                if issubclass(found, BaseException):
                    return True
            elif name.endswith(_EXCEPTION_SUFFIXES):
                return True
        elif is_exception(base, depth + 1):
            return True
    return False
