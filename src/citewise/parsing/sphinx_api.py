"""Sphinx's Python API directives as citewise reads them: autodoc's ``autoclass``/``automodule``…
turned into ``::: dotted.path`` markers whose options mirror autodoc's, expanded from the source
by :class:`citewise.parsing.mkdocstrings.ApiReference`."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml

__all__ = ["AUTODOC", "AnyOptions", "api_marker", "marker_directive"]

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
    """An autodoc directive as a ``:::`` line with the options that mirror autodoc's."""
    kind = node["citewise_api"]
    target = node["target"].split("(", 1)[0].strip()
    if kind in ("module", "currentmodule"):
        state["module"] = target
        return []
    given = node["options"]
    module = given.get("module") or state["module"]
    if kind == "automodule" or "." in target and _is_qualified(target, module):
        path = target
    else:
        path = f"{module}.{target}" if module else target
    members: Any = False
    if "members" in given or "inherited-members" in given:
        names = [m.strip() for m in given.get("members", "").split(",") if m.strip()]
        members = names or None
    options: dict[str, Any] = {
        "show_root_heading": True,
        "heading_level": level + 1,
        "members": members,
        "inherited_members": "inherited-members" in given,
        "merge_init_into_class": True,
        "show_submodules": False,
        "show_if_no_docstring": "undoc-members" in given,
        "filters": ["!^_"] + [f"!^{re.escape(m.strip())}$"
                              for m in given.get("exclude-members", "").split(",") if m.strip()],
        "docstring_style": "sphinx",
        "sphinx": True,
    }  # fmt: skip
    block = yaml.safe_dump({"options": options}, default_flow_style=True, width=10_000).strip()
    return [f"::: {path}\n    {block}"]


def _is_qualified(target: str, module: str) -> bool:
    """Whether a dotted autodoc target names its module (``requests.adapters.X``) rather than
    a member of the current one (``Session.mount``)."""
    head = target.split(".", 1)[0]
    return not module or head == module.split(".", 1)[0] or head[:1].islower()
