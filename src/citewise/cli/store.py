"""`citewise store migrate`: bring the store's schema up to date (PostgreSQL).

The PostgreSQL store migrates itself on first use when every pending migration is safe; this
command runs the others too (and is the way in when the URL says ``auto_migrate=false``).
Stores that keep their schema per file (SQLite, memory) have nothing to migrate.
"""

from __future__ import annotations

import argparse
from typing import Protocol, runtime_checkable

from citewise.cli.common import Subcommands
from citewise.config import Settings
from citewise.kb import Library

__all__ = ["add_store_commands"]


@runtime_checkable
class _Migratable(Protocol):
    def migrate(self) -> list[int]: ...

    def schema_version(self) -> int: ...


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    library = Library(settings)
    try:
        store = library.store
        if not isinstance(store, _Migratable):
            print(f"{type(store).__name__}: nothing to migrate (its files carry their schema)")
            return 0
        applied = store.migrate()
        done = f"applied {', '.join(map(str, applied))}" if applied else "already up to date"
        print(f"store schema version {store.schema_version()} ({done})")
    finally:
        library.close()
    return 0


def add_store_commands(commands: Subcommands) -> None:
    """``citewise store migrate``."""
    store = commands.add_parser("store", help="manage the store (CITEWISE_STORE_URL)")
    actions = store.add_subparsers(dest="store_command", required=True)
    migrate = actions.add_parser("migrate", help="apply pending schema migrations")
    migrate.set_defaults(run=cmd_migrate)
