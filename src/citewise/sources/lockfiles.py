"""Lock files as pins for ``citewise index --requirements``: ``uv.lock``, ``poetry.lock`` and
PEP 751 ``pylock.toml`` (every locked package from a package index, at its locked version)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from citewise.errors import SourceError

__all__ = ["is_lock_file", "read_lock"]

# How each lock file lists its packages, and the sources that are no published release.
_TABLES = {"uv.lock": "package", "poetry.lock": "package", "pylock.toml": "packages"}
_NOT_RELEASED = {"editable", "virtual", "directory", "git", "path", "url", "file", "vcs"}


def is_lock_file(path: Path) -> bool:
    return path.name in _TABLES or (path.name.startswith("pylock.") and path.suffix == ".toml")


def _not_released(package: dict[str, Any]) -> str:
    """Why a locked package is no published release ("" when it is one)."""
    source = package.get("source")
    if isinstance(source, dict):  # uv: {registry = …} | {editable = …} …; poetry: {type = …}
        kinds = {str(source.get("type", ""))} | set(source)
        found = sorted(kinds & _NOT_RELEASED)
        if found:
            article = "an" if found[0][0] in "aeiou" else "a"
            return f"{article} {found[0]} source, not a published release"
    for kind in ("vcs", "directory", "archive"):  # PEP 751
        if kind in package:
            return f"a {kind} source, not a published release"
    return ""


def read_lock(path: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(pins, skipped) of a lock file: (name, version) of each locked package from an index,
    and ("FILE: name", why) of the others. Its markers are not evaluated: every locked
    package counts (one not installed where the docs are looked up is named then).

    Raises:
        SourceError: it cannot be read or is not TOML.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise SourceError(f"cannot read {path}: {error}") from None
    table = _TABLES.get(path.name, "packages")
    pins: list[tuple[str, str]] = []
    skipped: list[tuple[str, str]] = []
    for package in data.get(table, []):
        name, version = str(package.get("name", "")), str(package.get("version", ""))
        where = f"{path.name}: {name or '?'}"
        why = _not_released(package) or ("" if name and version else "no name and version")
        if why:
            skipped.append((where, why))
        else:
            pins.append((name, version))
    return pins, skipped
