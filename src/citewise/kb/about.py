"""What this citewise is: its version, the store schema it writes and its default embedder."""

from __future__ import annotations

from citewise import __version__
from citewise.config import DEFAULT_EMBEDDER, ServiceSettings
from citewise.store.sqlite_schema import SCHEMA_VERSION

__all__ = ["version_text"]


def version_text() -> str:
    """One line for ``citewise --version``. It reads ``CITEWISE_EMBEDDER`` alone, so a bad
    setting elsewhere in the environment cannot hide the version."""
    embedder = ServiceSettings.from_env().embedder or DEFAULT_EMBEDDER
    return f"citewise {__version__} (SQLite store schema {SCHEMA_VERSION}, embedder {embedder})"
