"""Which scopes (parts of the docs) each file of a docs folder belongs to."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from citewise.sources.nav import ScopeRule, folder_nav_scopes

__all__ = ["ScopeOf", "folder_scopes", "scope_of"]

# Maps a doc id to its scopes: one name, or several separated by single spaces.
ScopeOf = Callable[[str], str]


def scope_of(doc_id: str) -> str:
    """A file's scope when the docs have no nav: its top-level folder, or ``""`` at the root."""
    head, sep, _ = doc_id.partition("/")
    return head if sep else ""


def folder_scopes(
    folder: Path, rule: ScopeRule | None = None, *, site_config: Path | None = None
) -> ScopeOf:
    """Scopes from the site's nav (``mkdocs.yml``/``zensical.toml`` above ``folder``, or
    ``site_config``) when there is one, else each file's top-level folder."""
    nav = folder_nav_scopes(folder, rule, config=site_config)
    return nav.scope_of if nav is not None else scope_of
