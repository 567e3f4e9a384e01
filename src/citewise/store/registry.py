"""The store registry: which engine a store URL names (``sqlite://…``, ``memory://…``, plugins).

A factory takes ``(url, home)`` and returns a :class:`~citewise.store.base.Store`; ``home``
is citewise's data folder, for engines that keep files. Built-in engines are imported on
first use; third-party ones register under the entry-point group ``citewise.stores`` or by
:func:`register_store`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from citewise.errors import ConfigurationError
from citewise.registry import Registry
from citewise.store.base import Store

__all__ = ["DEFAULT_URL", "STORES", "StoreFactory", "open_store", "register_store", "store_schemes"]

StoreFactory = Callable[[str, Path], Store]

STORES: Registry[StoreFactory] = Registry(
    "store",
    {
        "sqlite": "citewise.store.sqlite:from_url",
        "memory": "citewise.store.memory:from_url",
        "postgresql": "citewise.store.postgres:from_url",
        "postgres": "citewise.store.postgres:from_url",
    },
)

if TYPE_CHECKING:
    # Type-checks the built-ins against the protocols without importing them at run time.
    from citewise.store import memory, postgres, sqlite

    _checked: tuple[StoreFactory, ...] = (sqlite.from_url, memory.from_url, postgres.from_url)

# The SQLite folder ``home / "kb"``.
DEFAULT_URL = "sqlite://kb"


def register_store(scheme: str, factory: StoreFactory | str) -> None:
    """Make URLs ``scheme://…`` open stores built by ``factory`` (or ``"module:attribute"``)."""
    STORES.register(scheme.lower(), factory)


def store_schemes() -> list[str]:
    """The URL schemes a store can be opened by, sorted."""
    return STORES.names()


def open_store(url: str | None, *, home: Path) -> Store:
    """The store ``url`` names; None or ``""`` is the SQLite folder ``home / "kb"``.

    ``sqlite:///abs/folder`` or ``sqlite://folder`` (under ``home``); ``memory://`` or
    ``memory://name`` (one store per name in this process, shared by every opening);
    ``postgresql://user:pass@host/db`` (the ``postgres`` extra; see ``store/postgres.py``). An
    unknown scheme raises ConfigurationError naming the known ones.
    """
    url = url or DEFAULT_URL
    scheme, sep, _ = url.partition("://")
    if not sep or not scheme:
        # Never echo the URL: a database URL may carry a password.
        raise ConfigurationError(
            f"a store URL looks like scheme://… (known schemes: {', '.join(store_schemes())})"
        )
    scheme = scheme.lower()
    if scheme not in store_schemes():
        known = ", ".join(store_schemes())
        raise ConfigurationError(f"unknown store URL scheme {scheme!r} (known: {known})")
    return STORES.get(scheme)(url, Path(home))
