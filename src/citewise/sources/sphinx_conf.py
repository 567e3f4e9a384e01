"""Reads a Sphinx ``conf.py``'s settings without running it: its top-level literal assignments.

A release archive is untrusted input, so ``conf.py`` is never executed. The settings that shape
the published site (``extensions``, ``source_suffix``, ``html_file_suffix``, ``exclude_patterns``,
``autodoc_default_options``…) are almost always plain literals, read here with :mod:`ast`:
``name = literal``, ``name: T = literal``, ``name += [literal…]``, ``name.append(literal)`` and
``name.extend([…])``. A setting computed at run time (a function call, an import) is absent, and
so is anything assigned inside ``if``/``try`` blocks whose branch cannot be known.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

__all__ = ["SPHINX_CONF", "find_sphinx_conf", "read_sphinx_conf", "sphinx_settings"]

SPHINX_CONF = "conf.py"
# Where a docs folder keeps its conf.py: at its root, or (sphinx-quickstart's "separate source
# and build directories") in ``source/``.
_CONF_PLACES = ("", "source")


def find_sphinx_conf(docs_dir: Path) -> Path | None:
    """The ``conf.py`` of a Sphinx docs folder (``docs/conf.py`` or ``docs/source/conf.py``)."""
    for place in _CONF_PLACES:
        candidate = docs_dir / place / SPHINX_CONF if place else docs_dir / SPHINX_CONF
        if candidate.is_file():
            return candidate
    return None


def read_sphinx_conf(path: Path) -> dict[str, Any]:
    """The literal settings of the ``conf.py`` at ``path`` (empty when it does not parse)."""
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    return sphinx_settings(source)


def sphinx_settings(source: str) -> dict[str, Any]:
    """The literal top-level settings of a ``conf.py`` given as text."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    settings: dict[str, Any] = {}
    for statement in tree.body:
        _apply(statement, settings)
    return settings


def _apply(statement: ast.stmt, settings: dict[str, Any]) -> None:
    if isinstance(statement, ast.Assign):
        value = _literal(statement.value)
        if value is _UNKNOWN:
            for target in statement.targets:
                for name in _names(target):
                    settings.pop(name, None)
            return
        for target in statement.targets:
            if isinstance(target, ast.Name):
                settings[target.id] = value
    elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        value = _literal(statement.value) if statement.value is not None else _UNKNOWN
        if value is _UNKNOWN:
            settings.pop(statement.target.id, None)
        else:
            settings[statement.target.id] = value
    elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        _extend(settings, statement.target.id, _literal(statement.value))
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        _method_call(statement.value, settings)


def _method_call(call: ast.Call, settings: dict[str, Any]) -> None:
    """``extensions.append("x")`` / ``extensions.extend([...])`` on a known list."""
    function = call.func
    if not (isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)):
        return
    name = function.value.id
    if len(call.args) != 1 or call.keywords:
        return
    value = _literal(call.args[0])
    if function.attr == "append":
        _extend(settings, name, [value] if value is not _UNKNOWN else _UNKNOWN)
    elif function.attr == "extend":
        _extend(settings, name, value)


def _extend(settings: dict[str, Any], name: str, value: Any) -> None:
    current = settings.get(name)
    if isinstance(current, list) and isinstance(value, list | tuple):
        settings[name] = [*current, *value]
    elif isinstance(current, tuple) and isinstance(value, list | tuple):
        settings[name] = (*current, *value)
    elif isinstance(current, dict) and isinstance(value, dict):
        settings[name] = {**current, **value}
    else:
        # An addition to something unknown leaves it unknown.
        settings.pop(name, None)


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in _names(element)]
    return []


class _Unknown:
    """A value that is not a literal."""


_UNKNOWN = _Unknown()


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN
