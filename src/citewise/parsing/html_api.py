"""API entries on built pages: Sphinx's object descriptions and mkdocstrings' object headings.

Each entry becomes a heading of its own at the id the site gives it, titled the way the
source parsers title API sections so :mod:`citewise.retrieval.apiunits` recognises it: the
name as the page shows it, after a kind word (``class packaging.version.Version``,
``attribute name``) or followed by ``()`` for a callable (``Version.public()``), never the
whole signature, which goes to the body as a code block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bs4.element import Tag

__all__ = [
    "ApiEntry",
    "is_object_description",
    "mkdocstrings_entry",
    "mkdocstrings_target",
    "sphinx_entry",
    "title_for",
]

_CALLABLE = frozenset({"function", "method", "classmethod", "staticmethod", "decorator",
                       "decoratormethod", "macro"})  # fmt: skip
# Kinds whose word goes before the name (the words apiunits reads back).
_WORDED = {"class": "class", "exception": "exception", "attribute": "attribute",
           "property": "property", "data": "data", "module": "module"}  # fmt: skip
_SPHINX_DOMAINS = frozenset({"py", "c", "cpp", "js", "rst", "std", "http", "rb", "php"})
# Signature parts that are links or glyphs, not the signature: permalinks, "[source]".
_SIGNATURE_CHROME = frozenset({"headerlink", "viewcode-link", "viewcode-back"})
_MKDOCSTRINGS_KINDS = {"doc-class": "class", "doc-function": "function", "doc-method": "function",
                       "doc-attribute": "attribute", "doc-module": "module",
                       "doc-type_alias": "type"}  # fmt: skip

TextOf = Callable[["Tag", Callable[["Tag"], bool]], str]


@dataclass(frozen=True)
class ApiEntry:
    """An object description: its id (the anchor), title, and the blocks its body starts with."""

    anchor: str
    title: str
    blocks: tuple[str, ...]


def title_for(kind: str, name: str, anchor: str) -> str:
    """``class X``, ``X()``, ``attribute X``; a top-level module is titled by its bare id."""
    if kind == "module":
        return name if "." not in anchor else f"module {name}"
    if kind in _CALLABLE:
        return f"{name}()"
    word = _WORDED.get(kind)
    return f"{word} {name}" if word else name


def is_object_description(dl: Tag) -> bool:
    """A Sphinx object description: ``<dl class="py method">`` with ``dt.sig`` signatures."""
    classes = _classes(dl)
    return bool(classes & _SPHINX_DOMAINS) and any(
        "sig" in _classes(dt) or dt.get("id") for dt in dl.find_all("dt", recursive=False)
    )


def sphinx_entry(dl: Tag, text_of: TextOf) -> ApiEntry | None:
    """The entry of a Sphinx object description whose first signature has an id."""
    classes = [c for c in _attr(dl, "class").split() if c not in _SPHINX_DOMAINS]
    kind = next((c for c in classes if c not in ("simple", "field-list")), "object")
    signatures = dl.find_all("dt", recursive=False)
    anchor = next((_attr(dt, "id") for dt in signatures if _attr(dt, "id")), "")
    if not anchor:
        return None
    first = next(dt for dt in signatures if _attr(dt, "id") == anchor)
    prename = first.find(class_="sig-prename")
    own = first.find(class_="sig-name")
    name = text_of(prename, _no_chrome) if prename is not None else ""
    name = (name + (text_of(own, _no_chrome) if own is not None else "")).strip()
    name = "".join(name.split()) or anchor
    language = "python" if "py" in _classes(dl) else ""
    shown = [" ".join(text_of(dt, _no_chrome).split()) for dt in signatures]
    code = "\n".join(s for s in shown if s)
    blocks = (f"```{language}\n{code}\n```",) if code else ()
    return ApiEntry(anchor, title_for(kind, name, anchor), blocks)


def mkdocstrings_entry(heading: Tag, text_of: TextOf) -> ApiEntry | None:
    """The entry of an mkdocstrings heading (``h2.doc-heading`` with the object's path as id)."""
    anchor = _attr(heading, "id")
    classes = _classes(heading)
    if not anchor or "doc-heading" not in classes or "doc-heading-parameter" in classes:
        return None  # a parameter's heading is a plain section at its own id
    holder = heading.find_parent(class_="doc-object")
    kind = "object"
    if holder is not None:
        kind = next((_MKDOCSTRINGS_KINDS[c] for c in _classes(holder) if c in _MKDOCSTRINGS_KINDS),
                    "object")  # fmt: skip
    named = heading.find(class_="doc-object-name")
    name = text_of(named, _no_chrome) if named is not None else ""
    if not name:
        name = text_of(heading, _no_labels)
    name = "".join(name.split()) or anchor
    labels = [" ".join(label.get_text().split()) for label in heading.find_all(class_="doc-label")]
    blocks = (" ".join(f"`{label}`" for label in labels if label),) if labels else ()
    return ApiEntry(anchor, title_for(kind, name, anchor), blocks)


def mkdocstrings_target(anchor_tag: Tag) -> ApiEntry | None:
    """An object rendered without a heading (``show_root_heading: false``): mkdocstrings puts
    an empty ``<a id="pkg.mod">`` first in its ``div.doc-object``."""
    from bs4.element import Tag

    anchor = _attr(anchor_tag, "id")
    holder = anchor_tag.parent
    if not anchor or not isinstance(holder, Tag) or "doc-object" not in _classes(holder):
        return None
    if anchor_tag.get_text().strip():
        return None
    kind = next((_MKDOCSTRINGS_KINDS[c] for c in _classes(holder) if c in _MKDOCSTRINGS_KINDS),
                "object")  # fmt: skip
    return ApiEntry(anchor, title_for(kind, anchor, anchor), ())


def _no_chrome(tag: Tag) -> bool:
    return bool(_classes(tag) & _SIGNATURE_CHROME)


def _no_labels(tag: Tag) -> bool:
    return _no_chrome(tag) or bool(_classes(tag) & {"doc-labels", "doc-symbol"})


def _classes(tag: Tag) -> set[str]:
    return set(_attr(tag, "class").split())


def _attr(tag: Tag, name: str) -> str:
    value = tag.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)
