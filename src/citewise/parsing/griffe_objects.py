"""Griffe objects as mkdocstrings' Python handler sees them: which members it renders, in
which order, with what signature and docstring (and Sphinx autodoc's variants)."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "ApiOptions",
    "comment_doc",
    "descriptor_doc",
    "docstring_parser",
    "docstring_text",
    "documented_parameters",
    "filtered",
    "griffe_module",
    "is_public",
    "kind_of",
    "labels_of",
    "ordered",
    "signature",
]

_DEFAULT_FILTERS = ("!^_[^_]",)


@dataclass(frozen=True)
class ApiOptions:
    """The Python handler options that decide which objects a directive renders, and how."""

    docstring_style: str = "google"
    show_root_heading: bool = False
    show_submodules: bool = False
    merge_init_into_class: bool = False
    show_if_no_docstring: bool = False
    heading_level: int = 2
    members: tuple[str, ...] | bool | None = None
    filters: tuple[str, ...] | str = _DEFAULT_FILTERS
    # True: every inherited member; names: only those.
    inherited_members: bool | tuple[str, ...] = False
    members_order: str = "alphabetical"
    # A Sphinx autodoc directive (``autoclass``…) and its own options, as written: autodoc's
    # rules choose the members (see citewise.parsing.autodoc).
    autodoc: str = ""
    autodoc_options: tuple[tuple[str, str], ...] = ()
    # griffe extensions by name (``griffe_inherited_docstrings``, ``unpack_typeddict``…).
    extensions: tuple[str, ...] = ()
    # Packages loaded before rendering (for bases from another distribution).
    preload_modules: tuple[str, ...] = ()
    parameter_headings: bool = False
    type_parameter_headings: bool = False

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any]) -> ApiOptions:
        """Options from a handler's ``options`` table; unknown keys are ignored."""
        values: dict[str, Any] = {}
        for key in ("docstring_style", "members_order", "autodoc"):
            if isinstance(options.get(key), str):
                values[key] = options[key]
        for key in ("show_root_heading", "show_submodules", "merge_init_into_class",
                    "show_if_no_docstring", "inherited_members",
                    "parameter_headings", "type_parameter_headings"):  # fmt: skip
            if isinstance(options.get(key), bool):
                values[key] = options[key]
        if isinstance(options.get("heading_level"), int):
            values["heading_level"] = options["heading_level"]
        inherited = options.get("inherited_members")
        if isinstance(inherited, list):
            values["inherited_members"] = tuple(str(m) for m in inherited)
        members = options.get("members")
        if isinstance(members, bool) or members is None:
            values["members"] = members
        elif isinstance(members, list):
            values["members"] = tuple(str(m) for m in members)
        filters = options.get("filters")
        if filters == "public":
            values["filters"] = "public"
        elif isinstance(filters, list):
            values["filters"] = tuple(str(f) for f in filters)
        extensions = options.get("extensions")
        if isinstance(extensions, list):
            names = [e if isinstance(e, str) else next(iter(e), "") for e in extensions
                     if isinstance(e, str) or isinstance(e, Mapping) and e]  # fmt: skip
            values["extensions"] = tuple(str(n) for n in names)
        preload = options.get("preload_modules")
        if isinstance(preload, list):
            values["preload_modules"] = tuple(str(m) for m in preload if isinstance(m, str))
        given = options.get("autodoc_options")
        if isinstance(given, Mapping):
            values["autodoc_options"] = tuple(
                (str(k), "" if v is None else str(v)) for k, v in given.items()
            )
        return cls(**values)

    def merged(self, options: Mapping[str, Any]) -> ApiOptions:
        """These options overridden by a directive's own ``options:``."""
        given = ApiOptions.from_mapping(options)
        changed = {k: getattr(given, k) for k in options if hasattr(given, k)}
        return replace(self, **changed)


def griffe_module() -> Any:
    import griffe  # imported on first use: most docs have no API reference

    return griffe


def docstring_parser(style: str) -> Any:
    griffe = griffe_module()
    try:
        return griffe.Parser(style)
    except ValueError:
        return griffe.Parser.google


def kind_of(obj: Any) -> str:
    try:
        return str(obj.kind.value)
    except Exception:
        return "alias"


def labels_of(obj: Any) -> set[str]:
    try:
        return set(obj.labels)
    except Exception:
        return set()


def is_public(obj: Any) -> bool:
    try:
        return bool(obj.is_public)
    except Exception:
        return False


def _has_docstrings(obj: Any) -> bool:
    try:
        return bool(obj.has_docstrings)
    except Exception:
        return False


def _keep(name: str, filters: Sequence[str]) -> bool:
    """mkdocstrings' name filters: ``!`` excludes; the last matching rule decides."""
    keep: bool | None = None
    rules: set[bool] = set()
    for raw in filters:
        exclude = raw.startswith("!")
        pattern = raw[1:] if exclude else raw
        rules.add(exclude)
        if re.search(pattern, name):
            keep = not exclude
    if keep is None:
        return rules != {False}
    return keep


def filtered(
    objects: list[Any], opts: ApiOptions, members_list: tuple[str, ...] | bool | None
) -> list[Any]:
    inherited = opts.inherited_members
    objects = [o for o in objects if not o.inherited or inherited is True
               or isinstance(inherited, tuple) and o.name in inherited]  # fmt: skip
    if members_list is True:
        return objects
    if members_list is False or members_list == ():
        return []
    if members_list is not None:
        assert isinstance(members_list, tuple)
        return [o for o in objects if o.name in members_list]
    if opts.filters == "public":
        objects = [o for o in objects if is_public(o)]
    elif opts.filters:
        objects = [o for o in objects if _keep(o.name, opts.filters)]
    if not opts.show_if_no_docstring:
        objects = [o for o in objects if _has_docstrings(o)]
    return objects


def ordered(
    objects: list[Any], order: str, members_list: tuple[str, ...] | bool | None
) -> list[Any]:
    if isinstance(members_list, tuple) and members_list:
        rank = {name: i for i, name in enumerate(members_list)}
        return sorted(objects, key=lambda o: rank.get(o.name, len(rank)))
    if order == "source":
        return sorted(objects, key=lambda o: (_lineno(o), o.name))
    return sorted(objects, key=lambda o: o.name)


def _lineno(obj: Any) -> int:
    try:
        return int(obj.lineno or 0)
    except Exception:
        return 0


def signature(obj: Any, opts: ApiOptions) -> str | None:
    """The parameters as the site prints them (names and defaults), or None for a class
    whose ``__init__`` is not shown."""
    try:
        if obj.is_class:
            if not opts.merge_init_into_class:
                return None
            if "__init__" not in obj.members and "dataclass" not in labels_of(obj):
                return None
        parameters = list(obj.parameters)
    except Exception:
        return None
    if parameters and parameters[0].name in ("self", "cls") and _is_method(obj):
        parameters = parameters[1:]
    shown: list[str] = []
    star_done = False
    for index, param in enumerate(parameters):
        kind = param.kind.value
        if kind == "keyword-only" and not star_done:
            shown.append("*")
            star_done = True
        if kind == "variadic positional":
            shown.append(f"*{param.name}")
            star_done = True
        elif kind == "variadic keyword":
            shown.append(f"**{param.name}")
        else:
            shown.append(param.name if param.default is None else f"{param.name}={param.default}")
        after = parameters[index + 1].kind.value if index + 1 < len(parameters) else None
        if kind == "positional-only" and after != "positional-only":
            shown.append("/")
    return ", ".join(shown)


def _is_method(obj: Any) -> bool:
    try:
        return bool(obj.is_class or (obj.parent is not None and obj.parent.is_class))
    except Exception:
        return False


def docstring_text(obj: Any, opts: ApiOptions) -> str:
    try:
        docstring = obj.docstring
        if obj.is_class and opts.merge_init_into_class and "__init__" in obj.members:
            init = obj.members["__init__"].docstring
            if init is not None and init.value:
                docstring_text = docstring.value if docstring is not None else ""
                return "\n\n".join(t for t in (docstring_text, init.value) if t)
    except Exception:
        return ""
    return docstring.value if docstring is not None else ""


def comment_doc(obj: Any) -> str:
    """An attribute's ``#:`` comment (Sphinx's attribute docstrings): the lines just above it,
    else one after its value on the same line; ``""`` without one."""
    try:
        if kind_of(obj) != "attribute" or obj.lineno is None:
            return ""
        lines = obj.lines_collection[obj.filepath]
    except Exception:
        return ""
    for lineno in (obj.lineno, *_class_declarations(obj, lines)):
        found = _comment_at(lines, lineno)
        if found:
            return found
    return ""


def _comment_at(lines: Sequence[str], lineno: int) -> str:
    found: list[str] = []
    index = min(lineno - 2, len(lines) - 1)
    while index >= 0 and lines[index].strip().startswith("#:"):
        found.insert(0, lines[index].strip()[2:].strip())
        index -= 1
    if not found and 0 < lineno <= len(lines):
        code, mark, after = lines[lineno - 1].partition("#:")
        if mark and code.strip():
            found.append(after.strip())
    return "\n".join(found)


def _class_declarations(obj: Any, lines: Sequence[str]) -> list[int]:
    """The lines of the class body that declare the attribute (``environ: Env``): griffe keeps
    the line of a later ``self.environ = ...`` in ``__init__``, while Sphinx reads the ``#:``
    comment of either."""
    try:
        parent = obj.parent
        if parent is None or not parent.is_class or parent.filepath != obj.filepath:
            return []
        start, end = int(parent.lineno), int(parent.endlineno or len(lines))
    except Exception:  # noqa: BLE001  (no source lines for the class)
        return []
    declaration = re.compile(rf"^\s+{re.escape(obj.name)}\s*[:=]")
    body_indent: int | None = None
    found: list[int] = []
    for number in range(start + 1, min(end, len(lines)) + 1):
        line = lines[number - 1]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        body_indent = indent if body_indent is None else body_indent
        if indent == body_indent and declaration.match(line) and number != obj.lineno:
            found.append(number)
    return found


def descriptor_doc(obj: Any) -> str:
    """The ``doc=`` string an attribute's value is built with (``property(get, doc="...")``,
    werkzeug's ``header_property("Date", doc="...")``): at run time the descriptor carries it
    as its ``__doc__``, which is what Sphinx autodoc shows."""
    try:
        if kind_of(obj) != "attribute" or obj.lineno is None:
            return ""
        lines = obj.lines_collection[obj.filepath]
        statement = "\n".join(lines[obj.lineno - 1 : (obj.endlineno or obj.lineno)])
        tree = ast.parse(textwrap.dedent(statement))
    except Exception:  # noqa: BLE001  (no source, or a statement that does not parse alone)
        return ""
    node = tree.body[0] if tree.body else None
    value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
    if not isinstance(value, ast.Call):
        return ""
    for keyword in value.keywords:
        if keyword.arg == "doc" and isinstance(keyword.value, ast.Constant):
            if isinstance(keyword.value.value, str):
                return inspect.cleandoc(keyword.value.value)
    return ""


def documented_parameters(
    obj: Any, opts: ApiOptions, kind: str = "parameters"
) -> list[tuple[str, str, str]]:
    """The entries of an object's docstring sections of ``kind`` ("parameters", "type
    parameters") as ``(owner, name, description)``, owner "" for the object itself and
    ``__init__`` for its merged constructor's docstring: mkdocstrings gives each a heading
    when ``parameter_headings``/``type_parameter_headings`` is on."""
    docstrings = [("", getattr(obj, "docstring", None))]
    try:
        if obj.is_class and opts.merge_init_into_class:
            members = obj.all_members if opts.inherited_members else obj.members
            init = members.get("__init__")
            if init is not None:
                docstrings.append(("__init__", init.docstring))
    except Exception:  # noqa: BLE001
        pass
    found: list[tuple[str, str, str]] = []
    for owner, docstring in docstrings:
        if docstring is None:
            continue
        try:
            sections = docstring.parsed
        except Exception:  # noqa: BLE001  (a docstring the parser cannot read)
            continue
        for section in sections:
            if str(getattr(section.kind, "value", "")) != kind:
                continue
            found.extend((owner, str(p.name), str(p.description or "")) for p in section.value)
    return found
