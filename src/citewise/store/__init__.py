"""Stores for knowledge bases: the Store and KBStore protocols, the SQLite engine and a registry.

:func:`open_store` turns a store URL into an engine; ``engine.open(kb)`` gives the handle the
service layer works with. Other engines (``memory://``, plugins) load only when a URL names them.
"""

from __future__ import annotations

from citewise.store.base import DocumentUpdate, KBStore, SearchFilter, Store
from citewise.store.registry import open_store, register_store, store_schemes
from citewise.store.sqlite import SQLiteStore

__all__ = [
    "DocumentUpdate",
    "KBStore",
    "SQLiteStore",
    "SearchFilter",
    "Store",
    "open_store",
    "register_store",
    "store_schemes",
]
