"""Griffe objects as mkdocstrings' Python handler sees them: which members it renders, in
which order, with what signature and docstring (and Sphinx autodoc's variants)."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "ApiOptions",
    "comment_doc",
    "docstring_parser",
    "docstring_text",
    "documented_parameters",
    "filtered",
    "griffe_module",
    "inherit_docstrings",
    "is_public",
    "kind_of",
    "labels_of",
    "lazy_attribute_target",
    "load_namespace_folders",
    "load_stdlib_bases",
    "ordered",
    "rebound_classes_extension",
    "runtime_finder",
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
    parameter_headings: bool = False

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any]) -> ApiOptions:
        """Options from a handler's ``options`` table; unknown keys are ignored."""
        values: dict[str, Any] = {}
        for key in ("docstring_style", "members_order", "autodoc"):
            if isinstance(options.get(key), str):
                values[key] = options[key]
        for key in ("show_root_heading", "show_submodules", "merge_init_into_class",
                    "show_if_no_docstring", "inherited_members",
                    "parameter_headings"):  # fmt: skip
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


def load_stdlib_bases(loader: Any, package: Any) -> None:
    """Load the standard-library modules the package's classes inherit from."""
    wanted: set[str] = set()
    stack = [package]
    while stack:
        obj = stack.pop()
        for member in obj.members.values():
            if member.is_alias:
                continue
            if member.is_module or member.is_class:
                stack.append(member)
            if member.is_class:
                for base in member.bases:
                    path = str(getattr(base, "canonical_path", base))
                    if path.split(".", 1)[0] in sys.stdlib_module_names:
                        wanted.add(path.rsplit(".", 1)[0])
    for module in sorted(wanted):
        try:
            loader.load(module)
        except Exception:  # noqa: S112  (a C module has no source: its members stay unknown)
            continue


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
    found: list[str] = []
    index = min(obj.lineno - 2, len(lines) - 1)
    while index >= 0 and lines[index].strip().startswith("#:"):
        found.insert(0, lines[index].strip()[2:].strip())
        index -= 1
    if not found and 0 < obj.lineno <= len(lines):
        code, mark, after = lines[obj.lineno - 1].partition("#:")
        if mark and code.strip():
            found.append(after.strip())
    return "\n".join(found)


def inherit_docstrings(package: Any) -> None:
    """What the ``griffe_inherited_docstrings`` extension does: a class member without a
    docstring takes the docstring of the member it overrides, the nearest in the MRO."""
    griffe = griffe_module()
    seen: set[str] = set()

    def visit(obj: Any) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        try:
            if obj.is_class:
                for base in obj.mro():  # bases first: their members inherit before
                    visit(base)
            members = list(obj.members.values())
        except Exception:  # noqa: BLE001  (a base that does not resolve)
            return
        for member in members:
            if member.is_alias:
                continue
            if obj.is_class and member.docstring is None:
                above = _docstring_above(obj, member.name)
                if above is not None:
                    member.docstring = griffe.Docstring(
                        above.value, parent=member, parser=above.parser,
                        parser_options=above.parser_options,
                    )  # fmt: skip
            if member.is_class or member.is_module:
                visit(member)

    visit(package)


def _docstring_above(cls: Any, name: str) -> Any:
    try:
        for base in cls.mro():
            member = base.members.get(name)
            if member is not None and not member.is_alias and member.docstring is not None:
                return member.docstring
    except Exception:  # noqa: BLE001
        return None
    return None


def documented_parameters(obj: Any, opts: ApiOptions) -> list[tuple[str, str]]:
    """The parameters of an object's docstring "Parameters" sections, as ``(name,
    description)``: mkdocstrings gives each a heading when ``parameter_headings`` is on (a
    class merged with its ``__init__`` shows both docstrings' parameters)."""
    docstrings = [getattr(obj, "docstring", None)]
    try:
        if obj.is_class and opts.merge_init_into_class:
            members = obj.all_members if opts.inherited_members else obj.members
            init = members.get("__init__")
            if init is not None:
                docstrings.append(init.docstring)
    except Exception:  # noqa: BLE001
        pass
    found: list[tuple[str, str]] = []
    for docstring in docstrings:
        if docstring is None:
            continue
        try:
            sections = docstring.parsed
        except Exception:  # noqa: BLE001  (a docstring the parser cannot read)
            continue
        for section in sections:
            if str(getattr(section.kind, "value", "")) != "parameters":
                continue
            found.extend((str(p.name), str(p.description or "")) for p in section.value)
    return found


def runtime_finder(search_paths: Sequence[str]) -> Any:
    """A griffe module finder that ignores type stubs (``.pyi``): Sphinx autodoc documents the
    objects the code defines at run time, not the ones a stub declares."""
    griffe = griffe_module()

    class RuntimeFinder(griffe.ModuleFinder):  # type: ignore[misc,name-defined]
        extensions_set = {".py"}  # noqa: RUF012  (griffe's class-level setting)

        def find_package(self, module_name: str) -> Any:
            package = super().find_package(module_name)
            if isinstance(package, griffe.Package) and package.stubs is not None:
                return griffe.Package(package.name, package.path, None)
            return package

    return RuntimeFinder(search_paths)


def rebound_classes_extension() -> Any:
    """A griffe extension keeping a class that the module rebinds to a call on it
    (``Props = _add_repr(Props)``): at run time (what Sphinx autodoc sees) the name is still
    the class, where griffe would make it an attribute."""
    import ast

    griffe = griffe_module()

    class KeepReboundClasses(griffe.Extension):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self._kept: dict[tuple[str, str], Any] = {}

        def on_attribute_node(self, *, node: Any, agent: Any, **kwargs: Any) -> None:
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                return
            target = node.targets[0]
            if not (isinstance(target, ast.Name) and isinstance(node.value, ast.Call)):
                return
            current = agent.current.members.get(target.id)
            if current is None or current.is_alias or not current.is_class:
                return
            if any(isinstance(n, ast.Name) and n.id == target.id for n in ast.walk(node.value)):
                self._kept[(agent.current.path, target.id)] = current

        def on_attribute_instance(self, *, node: Any, attr: Any, agent: Any, **kwargs: Any) -> None:
            kept = self._kept.pop((agent.current.path, attr.name), None)
            if kept is not None:
                agent.current.set_member(attr.name, kept)

    return KeepReboundClasses()


def lazy_attribute_target(module: Any, name: str) -> str | None:
    """The dotted path a module's ``__getattr__`` (PEP 562) returns for ``name``, read from
    its source: ``if name == "Old": from .core import _Old; return _Old`` gives
    ``pkg.core._Old``; None when the function has no such branch."""
    import ast

    try:
        function = module.members.get("__getattr__")
        if function is None or function.is_alias or not function.is_function:
            return None
        source = "\n".join(module.lines_collection[module.filepath])
        tree = ast.parse(source)
    except Exception:  # noqa: BLE001  (no readable source)
        return None
    package = module.path if module.is_init_module else module.path.rpartition(".")[0]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and node.name == "__getattr__"):
            continue
        for branch in ast.walk(node):
            if not (isinstance(branch, ast.If) and _compares_name(branch.test, name)):
                continue
            imported: dict[str, str] = {}
            for statement in ast.walk(ast.Module(body=branch.body, type_ignores=[])):
                if isinstance(statement, ast.ImportFrom):
                    base = _absolute(statement.module or "", statement.level, package)
                    for alias in statement.names:
                        imported[alias.asname or alias.name] = f"{base}.{alias.name}"
                elif isinstance(statement, ast.Return) and isinstance(statement.value, ast.Name):
                    return imported.get(statement.value.id)
    return None


def _compares_name(test: Any, name: str) -> bool:
    import ast

    return (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
        and any(isinstance(c, ast.Constant) and c.value == name
                for c in (test.left, *test.comparators))
    )  # fmt: skip


def _absolute(module: str, level: int, package: str) -> str:
    if not level:
        return module
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - (level - 1)]) if level > 1 else package
    return f"{base}.{module}" if module else base


def load_namespace_folders(loader: Any, package: Any) -> None:
    """Load the folders without ``__init__.py`` inside a package (``flask/sansio/``): griffe
    leaves them out, but Python imports them (implicit namespace packages), so the classes
    defined there are bases Sphinx autodoc sees."""
    griffe = griffe_module()
    root = package.filepath
    if isinstance(root, list) or root is None or root.name != "__init__.py":
        return
    for folder in sorted(p for p in root.parent.rglob("*") if p.is_dir()):
        relative = folder.relative_to(root.parent)
        if any(part.startswith((".", "_")) or not part.isidentifier() for part in relative.parts):
            continue
        if (folder / "__init__.py").exists() or not any(folder.glob("*.py")):
            continue
        parent = package
        for part in relative.parts:
            if part not in parent.members:
                parent.set_member(part, griffe.Module(part, filepath=[folder]))
            parent = parent.members[part]
        if parent.is_alias:
            continue
        for path in sorted(folder.glob("*.py")):
            if not path.stem.isidentifier() or path.stem in parent.members:
                continue
            code = path.read_text(encoding="utf-8", errors="replace")
            loader.lines_collection[path] = code.splitlines()
            module = griffe.visit(
                path.stem, path, code, parent=parent, extensions=loader.extensions,
                docstring_parser=loader.docstring_parser,
                lines_collection=loader.lines_collection,
                modules_collection=loader.modules_collection,
            )  # fmt: skip
            parent.set_member(path.stem, module)
