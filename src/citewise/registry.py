"""Registries of named parts (stores, embedders, parsers, rerankers, query rewrites, workflows,
index strategies, chat models): one mechanism for all.

A part is named by a ``"module:attribute"`` string and imported on first use, so nothing
registers by import side effect and an unused part costs nothing. Third-party packages add
parts through entry points (group ``citewise.<kind>s``, e.g. ``citewise.rerankers``); code can
also call :meth:`Registry.register` at run time. Names are open: a request names a part as a
plain string, and :meth:`Registry.check` (or :meth:`Registry.get`) validates it when it is
used, naming the known ones.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from importlib.metadata import EntryPoints, entry_points
from typing import Generic, TypeVar, cast

from citewise.errors import ConfigurationError

T = TypeVar("T")

# Every installed package's entry points, read once for all registries (one scan of the
# installed distributions, about 30 ms) until a registry is rescanned.
_installed: EntryPoints | None = None
_installed_lock = threading.Lock()
_registries: list[Registry[object]] = []


def rescan() -> None:
    """Read the installed packages' entry points again, for every registry (a package
    installed or removed while the process runs; tests)."""
    for registry in list(_registries):
        registry.rescan()


def _entry_points(group: str) -> EntryPoints:
    global _installed
    with _installed_lock:
        if _installed is None:
            # Python 3.11 gives SelectableGroups here: its ``select(group=…)`` is the same.
            _installed = cast(EntryPoints, entry_points())
        return _installed.select(group=group)


class Registry(Generic[T]):
    """Named factories of one kind of backend.

    Args:
        kind: what the registry holds, for messages and the entry-point group
            (``citewise.{kind}s``).
        builtins: name → ``"module:attribute"`` of the backends that ship with citewise.
        reserved: names the caller handles itself (``off``): valid for :meth:`check` and
            listed among the known names, never loaded.
        group: the entry-point group (default ``citewise.{kind}s``).

    Iterating gives the reserved names, the built-ins in their order, then the others by name.
    """

    def __init__(
        self,
        kind: str,
        builtins: Mapping[str, str],
        *,
        reserved: Sequence[str] = (),
        group: str | None = None,
    ) -> None:
        self.kind = kind
        self.group = group or f"citewise.{kind}s"
        self.reserved = tuple(reserved)
        self._builtins = tuple(builtins)
        self._targets: dict[str, str] = dict(builtins)
        self._loaded: dict[str, T] = {}
        self._from_entry_points: set[str] = set()
        self._entry_points_read = False
        self._lock = threading.Lock()
        _registries.append(cast("Registry[object]", self))

    def register(self, name: str, factory: T | str) -> None:
        """Make ``factory`` (or the ``"module:attribute"`` it names) available as ``name``."""
        with self._lock:
            self._loaded.pop(name, None)
            self._from_entry_points.discard(name)
            if isinstance(factory, str):
                self._targets[name] = factory
            else:
                self._targets.pop(name, None)
                self._loaded[name] = factory

    def names(self) -> list[str]:
        """The registered names, sorted (reserved names excluded)."""
        self._read_entry_points()
        return sorted({*self._targets, *self._loaded})

    def plugins(self) -> list[str]:
        """The names that do not ship with citewise (entry points, run-time registrations)."""
        return [name for name in self.names() if name not in self._builtins]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ordered())

    def __len__(self) -> int:
        return len(self._ordered())

    def _ordered(self) -> list[str]:
        others = [name for name in self.plugins() if name not in self.reserved]
        return [*self.reserved, *self._builtins, *others]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self.reserved or name in self.names())

    def check(self, name: str) -> str:
        """``name`` if it is known (reserved or registered), else a ConfigurationError naming
        the known ones. Nothing is imported."""
        if name not in self:
            raise ConfigurationError(f"unknown {self.kind} {name!r} (known: {', '.join(self)})")
        return name

    def get(self, name: str) -> T:
        """The factory registered as ``name`` (ConfigurationError naming the known ones)."""
        self._read_entry_points()
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            target = self._targets.get(name)
        if target is None:
            known = ", ".join(self.names()) or "none"
            raise ConfigurationError(f"unknown {self.kind} {name!r} (known: {known})")
        factory = cast(T, load(target))
        with self._lock:
            self._loaded.setdefault(name, factory)
            return self._loaded[name]

    def rescan(self) -> None:
        """Forget what entry points registered and read them again on next use (a package
        installed or removed while the process runs; tests)."""
        global _installed
        with _installed_lock:
            _installed = None
        with self._lock:
            for name in self._from_entry_points:
                self._targets.pop(name, None)
                self._loaded.pop(name, None)
            self._from_entry_points.clear()
            self._entry_points_read = False

    def _read_entry_points(self) -> None:
        if self._entry_points_read:
            return
        found = {ep.name: ep.value for ep in _entry_points(self.group)}
        with self._lock:
            for name, value in found.items():
                if name not in self._targets and name not in self._loaded:
                    self._targets[name] = value
                    self._from_entry_points.add(name)
            self._entry_points_read = True


def load(target: str) -> object:
    """The object a ``"module:attribute"`` string names."""
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    obj: object = module
    for part in attribute.split(".") if attribute else ():
        obj = getattr(obj, part)
    return obj
