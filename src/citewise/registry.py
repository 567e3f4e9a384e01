"""Registries of backends (embedders, parsers, stores, rerankers): one mechanism for all.

A backend is named by a ``"module:attribute"`` string and imported on first use, so nothing
registers by import side effect and an unused backend costs nothing. Third-party packages add
backends through entry points (group ``citewise.<kind>s``, e.g. ``citewise.stores``); code can
also call :meth:`Registry.register` at run time.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Generic, TypeVar, cast

from citewise.errors import ConfigurationError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named factories of one kind of backend.

    Args:
        kind: what the registry holds, for messages and the entry-point group
            (``citewise.{kind}s``).
        builtins: name → ``"module:attribute"`` of the backends that ship with citewise.
    """

    def __init__(self, kind: str, builtins: Mapping[str, str]) -> None:
        self.kind = kind
        self.group = f"citewise.{kind}s"
        self._targets: dict[str, str] = dict(builtins)
        self._loaded: dict[str, T] = {}
        self._entry_points_read = False
        self._lock = threading.Lock()

    def register(self, name: str, factory: T | str) -> None:
        """Make ``factory`` (or the ``"module:attribute"`` it names) available as ``name``."""
        with self._lock:
            self._loaded.pop(name, None)
            if isinstance(factory, str):
                self._targets[name] = factory
            else:
                self._targets.pop(name, None)
                self._loaded[name] = factory

    def names(self) -> list[str]:
        self._read_entry_points()
        return sorted({*self._targets, *self._loaded})

    def get(self, name: str) -> T:
        """The factory registered as ``name`` (ConfigurationError naming the known ones)."""
        self._read_entry_points()
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            target = self._targets.get(name)
        if target is None:
            known = ", ".join(self.names())
            raise ConfigurationError(f"unknown {self.kind} {name!r} (known: {known})")
        factory = cast(T, load(target))
        with self._lock:
            self._loaded.setdefault(name, factory)
            return self._loaded[name]

    def _read_entry_points(self) -> None:
        if self._entry_points_read:
            return
        found = {ep.name: ep.value for ep in entry_points(group=self.group)}
        with self._lock:
            for name, value in found.items():
                self._targets.setdefault(name, value)
            self._entry_points_read = True


def load(target: str) -> object:
    """The object a ``"module:attribute"`` string names."""
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    obj: object = module
    for part in attribute.split(".") if attribute else ():
        obj = getattr(obj, part)
    return obj
