"""Loading a release's source with griffe as the site's own tool sees it, and only that source.

The search paths are the release's folders (plus, for Sphinx, the standard library's source for
base classes, and the folders its dependencies are installed in when they are given: a class
inheriting from another distribution's shows that class's members, as it does on the site):
never ``sys.path``, never an import or inspection of a module importable in citewise's
process, never a path relative to the working folder. mkdocstrings' view is griffe's
(its builtin extensions by name, ``griffe_inherited_docstrings`` reimplemented); Sphinx autodoc's
is the run-time one: type stubs ignored, classes a module rebinds kept, folders without
``__init__.py`` loaded, names a module's ``__getattr__`` returns found.
"""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citewise.errors import SourceError
from citewise.parsing.griffe_objects import ApiOptions, docstring_parser, griffe_module

__all__ = ["load_release", "lazy_object"]

# The griffe extension that gives overriding members their base's docstring.
_INHERITED_DOCSTRINGS = frozenset({"griffe_inherited_docstrings", "inherited_docstrings"})


def load_release(
    package: str,
    paths: Sequence[Path],
    options: ApiOptions,
    *,
    runtime: bool,
    dependencies: Sequence[Path] = (),
) -> Any:
    """A griffe loader holding ``package`` (and what it needs) read from ``paths``; ``runtime``
    gives Sphinx autodoc's view (see the module docstring). ``dependencies``: folders where
    the release's dependencies are installed (a site-packages), read only for what the
    release's own source does not hold: its classes' bases (Sphinx) and the handler's
    ``preload_modules`` (mkdocstrings).

    Raises:
        SourceError: no source folder, or the package is not in it.
    """
    griffe = griffe_module()
    # Sphinx documents members inherited from the standard library (CookieJar's), so its
    # bases are read from the stdlib's source too.
    stdlib = [sysconfig.get_paths()["stdlib"]] if runtime else []
    roots = [str(p) for p in paths if p.is_dir()]
    where = ", ".join(str(p) for p in paths)
    if not roots:
        raise SourceError(f"API reference: no source folder at {where}")
    outside = [str(p) for p in dependencies if p.is_dir()]
    loader = griffe.GriffeLoader(
        search_paths=roots + stdlib + outside,
        docstring_parser=docstring_parser(options.docstring_style),
        allow_inspection=False,
        extensions=_extensions(options, runtime=runtime),
    )
    if runtime:
        loader.finder = runtime_finder(roots + stdlib + outside)
    try:
        _load_with_siblings(loader, package)
    except (ImportError, griffe.GriffeError) as error:
        raise SourceError(f"API reference: package {package!r} not found in {where}: "
                          f"{error}") from None  # fmt: skip
    if runtime:
        load_namespace_folders(loader, loader.modules_collection[package])
        load_outside_bases(loader, loader.modules_collection[package], dependencies)
    else:
        _load_all(loader, options.preload_modules)
    loader.resolve_aliases(external=runtime, implicit=False)
    if _INHERITED_DOCSTRINGS & set(options.extensions):
        inherit_docstrings(loader.modules_collection[package])
    return loader


def lazy_object(collection: Any, identifier: str) -> Any:
    """What a module's ``__getattr__`` returns for the name (Sphinx imports it, so a
    deprecated or lazily imported name is documented), or None."""
    module_path, _, name = identifier.rpartition(".")
    try:
        module = collection[module_path]
    except KeyError:
        return None
    target = lazy_attribute_target(module, name)
    if target is None:
        return None
    try:
        return collection[target]
    except KeyError:
        return None


def _extensions(options: ApiOptions, *, runtime: bool) -> Any:
    """The griffe extensions the site configures that griffe ships (by name only: an
    extension from a path or another package would run the site's code); for Sphinx
    (``runtime``), classes a module rebinds stay classes."""
    griffe = griffe_module()
    names = [n for n in options.extensions if n in griffe.builtin_extensions]
    extensions = griffe.load_extensions(*names)
    if runtime:
        extensions.add(rebound_classes_extension())
    return extensions


def load_outside_bases(loader: Any, package: Any, dependencies: Sequence[Path] = ()) -> None:
    """Load the modules outside the package its classes inherit from: the standard library's,
    and those of the installed ``dependencies`` (``werkzeug`` for ``flask.Request``)."""
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
                    top = path.split(".", 1)[0]
                    # The package's own modules are never read from an installed copy.
                    if top in sys.stdlib_module_names or (
                        top not in loader.modules_collection
                        and any((folder / top).is_dir() for folder in dependencies)
                    ):
                        wanted.add(path.rsplit(".", 1)[0])
    _load_all(loader, sorted(wanted))


def _load_all(loader: Any, modules: Sequence[str]) -> None:
    for module in modules:
        try:
            loader.load(module)
        except Exception:  # noqa: S112  (a C module has no source: its members stay unknown)
            continue


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


def _load_with_siblings(loader: Any, package: str) -> None:
    """Load ``package``, and first each package of the source it needs loaded to load (its
    stubs re-exporting another package's names: ``attrs`` from ``attr``)."""
    griffe = griffe_module()
    tried: set[str] = set()
    while True:
        try:
            loader.load(package, try_relative_path=False)
            return
        except griffe.AliasResolutionError as error:
            needed = str(error.alias.target_path).split(".", 1)[0]
            if needed == package or needed in tried:
                raise
            tried.add(needed)
            loader.load(needed, try_relative_path=False)
