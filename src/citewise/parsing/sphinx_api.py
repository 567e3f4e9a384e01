"""Sphinx's Python API directives as citewise reads them: autodoc's ``autoclass``/``automodule``…
turned into ``::: dotted.path`` markers whose options mirror autodoc's, expanded from the source
by :class:`citewise.parsing.mkdocstrings.ApiReference`."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from citewise.parsing.common import Heading, Part
from citewise.parsing.html_api import title_for

__all__ = [
    "AUTODOC",
    "PY_OBJECTS",
    "AnyOptions",
    "BlockRenderer",
    "add_node",
    "api_marker",
    "autodoc_marker",
    "marker_directive",
    "py_object_directive",
]

# The Python domain's object directives (``.. class::``, ``.. py:method::``…).
PY_OBJECTS = ("class", "exception", "function", "method", "classmethod", "staticmethod",
              "attribute", "data", "property", "decorator", "decoratormethod", "type")  # fmt: skip

# autodoc directives whose target is a member of a class (``Class.name``).
_CLASS_LEVEL = ("automethod", "autoattribute", "autoproperty")

# Sphinx's autodoc directives and the kind of object each documents.
AUTODOC = ("automodule", "autoclass", "autoexception", "autofunction", "automethod",
            "autoattribute", "autodata", "autoproperty", "autodecorator")  # fmt: skip


def marker_directive(kind: str) -> type:
    """An autodoc directive as an API marker; ``module`` sets the page's current module."""
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class Marker(Directive):  # type: ignore[misc]
        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True

        def run(self) -> list[Any]:
            node = nodes.container()
            node["citewise_api"] = kind
            node["target"] = self.arguments[0].strip() if self.arguments else ""
            node["options"] = dict(self.options or {})
            return [node]

    # Autodoc takes many options (members, show-inheritance…): accept every name.
    Marker.option_spec = AnyOptions()
    return Marker


class AnyOptions(dict[str, Callable[[str | None], Any]]):
    """An option spec that accepts any option name, its value kept as text."""

    def __bool__(self) -> bool:
        return True  # docutils reads options only when the spec is truthy

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Callable[[str | None], Any]:
        return _option_value

    def get(self, key: str, default: Any = None) -> Callable[[str | None], Any]:
        return _option_value


def _option_value(value: str | None) -> str:
    return (value or "").strip()


def api_marker(node: Any, state: dict[str, str], level: int) -> list[str]:
    """An autodoc directive node (see :func:`marker_directive`) as its ``:::`` marker."""
    return autodoc_marker(node["citewise_api"], node["target"], node["options"], state, level)


def autodoc_marker(
    directive: str, argument: str, options: Mapping[str, str | None], state: dict[str, str],
    level: int,
) -> list[str]:  # fmt: skip
    """An autodoc directive (``autoclass``, or ``module``/``currentmodule`` which set
    ``state["module"]``) as a ``::: dotted.path`` marker line and its options block, ``[]`` when
    it renders nothing here.

    The path is the one autodoc documents the object under: a dotted target names its module
    (``pkg.sub.func``), an undotted one is in the current module; a method or attribute target
    ``Class.name`` is in the current module. The options block is one YAML flow line indented by
    four spaces: ``{options: {autodoc: autoclass, autodoc_options: {members: '', …},
    heading_level: N}}``, the directive's own options as written (values as text, flags as
    ``''``); ``conf.py``'s defaults apply when the marker is expanded.
    """
    kind = directive.removeprefix("py:")
    target = argument.split("(", 1)[0].strip().splitlines()[0].strip() if argument.strip() else ""
    if kind in ("module", "currentmodule"):
        state["module"] = "" if target == "None" else target
        return []
    if not target:
        return []
    module = (options.get("module") or "").strip() or state.get("module", "")
    head, _, _name = target.rpartition(".")
    if kind in _CLASS_LEVEL:
        explicit = head.rpartition(".")[0] if head else ""
    else:
        explicit = head
    path = target if explicit or not module or kind == "automodule" else f"{module}.{target}"
    own = {str(k): (v or "").strip() for k, v in options.items() if k != "module"}
    marker = {"autodoc": kind, "autodoc_options": own, "heading_level": level + 1}
    block = yaml.safe_dump({"options": marker}, default_flow_style=True, width=10_000).strip()
    return [f"::: {path}\n    {block}"]


# --- hand-written Python objects (``.. class::``, ``.. py:function::``…) ------------------------


def py_object_directive(kind: str) -> type:
    """A Python-domain directive as a node holding its signatures, options and parsed content
    (:func:`add_node` turns it into a section at the object's id)."""
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class PyObject(Directive):  # type: ignore[misc]
        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True

        def run(self) -> list[Any]:
            node = nodes.container()
            node["citewise_py"] = kind
            argument = self.arguments[0] if self.arguments else ""
            # Several signatures, one a line; a trailing backslash continues a line.
            joined = re.sub(r"\\\n\s*", " ", argument)
            node["signatures"] = [line.strip() for line in joined.split("\n") if line.strip()]
            node["options"] = dict(self.options or {})
            if self.content:
                # Sphinx allows titles in an object's content ("Attributes" / "-----").
                self.state.nested_parse(self.content, self.content_offset, node, match_titles=True)
            return [node]

    PyObject.option_spec = AnyOptions()
    return PyObject


BlockRenderer = Callable[[Any, dict[str, str], int], list[str]]


def add_node(
    parts: list[Part], node: Any, state: dict[str, str], level: int, blocks: BlockRenderer
) -> None:
    """Add a doctree node under ``parts``: its Markdown blocks (``blocks``) to the last part,
    except that each indexed Python object (a hand-written ``.. class::``…, a ``.. module::``)
    starts a part of its own at the id Sphinx gives it, its content under it; objects nested in
    a class's content are that class's members."""
    if not _holds_py_object(node):
        parts[-1].blocks.extend(blocks(node, state, level))
        return
    if node.get("citewise_api") == "module":
        name = node["target"].strip()
        blocks(node, state, level)  # sets the current module
        if name and not _no_index(node["options"]):
            # Its bare name, not the built page's "module pkg.mod": the text after a
            # hand-written module target is the page's own prose (a quickstart's opening).
            parts.append(Part(Heading(min(level + 1, 6), name, f"module-{name}")))
        return
    if "citewise_py" not in node:
        for child in node.children:
            add_node(parts, child, state, level, blocks)
        return
    kind = node["citewise_py"]
    options = node["options"]
    module = (options.get("module") or "").strip() or state.get("module", "")
    in_class = state.get("class", "")
    found = [(_full_name(sig, in_class), sig) for sig in node["signatures"]]
    names = [(*n, sig) for n, sig in found if n is not None]
    if not names:
        parts[-1].blocks.extend(blocks(node, state, level))
        return
    indexed = not _no_index(options)
    for qualified, shown, sig in names:
        anchor = f"{module}.{qualified}" if module else qualified
        # Titled as the built page shows it (``class tiny.Client``, ``get()``); the
        # signature opens the body.
        if not in_class and module:
            shown = f"{module}.{shown}"
        title = title_for(kind, shown, anchor)
        code = f"```python\n{sig}\n```"
        if indexed:
            parts.append(Part(Heading(min(level + 1, 6), title, anchor), [code]))
        else:
            parts[-1].blocks.extend((f"**{title}**", code))
    saved = dict(state)
    if kind in ("class", "exception"):
        state["class"] = names[0][0]
    if options.get("module"):
        state["module"] = module
    for child in node.children:
        add_node(parts, child, state, level + 1, blocks)
    state.clear()
    state.update(saved)


def _holds_py_object(node: Any) -> bool:
    from docutils import nodes

    if not isinstance(node, nodes.Element):
        return False
    return any(
        "citewise_py" in n or n.get("citewise_api") == "module"
        for n in node.findall(nodes.container)
    )


def _no_index(options: Mapping[str, Any]) -> bool:
    return "noindex" in options or "no-index" in options


# Sphinx's py_sig_re: optional class prefix, name, type parameters, arguments, return.
_PY_SIGNATURE_RE = re.compile(
    r"^(?P<prefix>[\w.]*\.)?(?P<name>\w+)\s*(?:\[\s*(?P<types>.*)\s*\])?"
    r"(?:\(\s*(?P<args>.*)\s*\)(?:\s*->\s*(?P<returns>.*))?)?$"
)
# Words a signature may start with (``.. method:: async fetch()``, ``.. attribute:: final x``).
_SIGNATURE_PREFIXES = re.compile(r"^(?:(?:async|await|abstract|abstractmethod|classmethod|"
                                 r"staticmethod|final|class|def)\s+)+")  # fmt: skip


def _full_name(signature: str, current_class: str) -> tuple[str, str] | None:
    """An object's dotted name within its module (Sphinx's rules for the class it is in) and
    the name its signature shows (``Client.get`` as written), from its signature; None when
    the signature is not a Python one."""
    text = _SIGNATURE_PREFIXES.sub("", signature.strip())
    if "(" not in text:  # an attribute's `x: int = 1`
        text = re.split(r"[:=]", text, maxsplit=1)[0].strip()
    match = _PY_SIGNATURE_RE.match(text)
    if match is None:
        return None
    prefix, name = match["prefix"] or "", match["name"]
    if current_class:
        if prefix and (prefix == f"{current_class}." or prefix.startswith(f"{current_class}.")):
            qualified = prefix + name
        elif prefix:
            qualified = f"{current_class}.{prefix}{name}"
        else:
            qualified = f"{current_class}.{name}"
    else:
        qualified = prefix + name
    return qualified, prefix + name
