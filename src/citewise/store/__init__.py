"""Stores for knowledge bases: the Store protocol, the SQLite store and a registry by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from citewise.errors import ConfigurationError
from citewise.store.base import DocumentUpdate, SearchFilter, Store
from citewise.store.sqlite import SQLiteStore

__all__ = [
    "DocumentUpdate",
    "SQLiteStore",
    "SearchFilter",
    "Store",
    "get_store",
    "register_store",
    "store_names",
]

StoreFactory = Callable[..., Store]
_REGISTRY: dict[str, StoreFactory] = {"sqlite": SQLiteStore}


def register_store(name: str, factory: StoreFactory) -> None:
    """Make a store available under ``name`` (e.g. ``postgres`` from an optional extra)."""
    _REGISTRY[name] = factory


def store_names() -> list[str]:
    return sorted(_REGISTRY)


def get_store(name: str, **options: Any) -> Store:
    """Build the store registered as ``name``; ``options`` go to its factory (sqlite: root)."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        known = ", ".join(store_names())
        raise ConfigurationError(f"unknown store {name!r} (known: {known})") from None
    return factory(**options)
