"""Sphinx's Python API directives as citewise reads them: autodoc's ``autoclass``/``automodule``…
turned into ``::: dotted.path`` markers whose options mirror autodoc's, expanded from the source
by :class:`citewise.parsing.mkdocstrings.ApiReference`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import yaml

__all__ = ["AUTODOC", "AnyOptions", "api_marker", "autodoc_marker", "marker_directive"]

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
