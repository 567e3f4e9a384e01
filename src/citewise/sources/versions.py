"""Resolves a requested version against the versions.json that mike and Zensical publish."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from citewise.errors import ReleaseNotFoundError, SourceError

__all__ = [
    "DEVELOPMENT_VERSIONS",
    "LATEST",
    "PublishedVersion",
    "ResolvedRelease",
    "parse_versions",
    "resolve_version",
]

LATEST = "latest"
# What a package reports when it runs from a checkout without a tag (hatch-vcs, setuptools-scm
# fallbacks): no docs are published for it, so the newest docs stand in.
DEVELOPMENT_VERSIONS = frozenset({"0.0.0", "0.0.1"})


@dataclass(frozen=True)
class PublishedVersion:
    """One entry of versions.json: ``version`` is the URL segment and the tag name's core."""

    version: str
    title: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResolvedRelease:
    """Which published docs answer for a requested version, and how they were chosen.

    ``how`` is ``exact``, ``alias``, ``normalized`` (PEP 440 equal: ``1.2.0rc1`` =
    ``1.2.0-rc1``), ``development`` (a placeholder version) or ``fallback`` (absent, with
    ``--fallback latest``).
    """

    requested: str
    entry: PublishedVersion
    how: str

    @property
    def version(self) -> str:
        return self.entry.version

    @property
    def is_fallback(self) -> bool:
        """True when the docs are not those of the requested version itself."""
        return self.how in ("development", "fallback")


def parse_versions(data: bytes | str, source: str) -> list[PublishedVersion]:
    """The entries of a versions.json document, newest first as published.

    Raises:
        SourceError: not JSON, or not a list of objects with a string ``version``
            (the message names ``source``).
    """
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise SourceError(f"{source}: not a versions.json (invalid JSON: {error})") from None
    if not isinstance(raw, list):
        raise SourceError(f"{source}: not a versions.json (expected a list of versions)")
    entries: list[PublishedVersion] = []
    for item in raw:
        version = item.get("version") if isinstance(item, dict) else None
        if not isinstance(version, str) or not version.strip():
            raise SourceError(f"{source}: not a versions.json (an entry has no version: {item!r})")
        title = item.get("title")
        aliases = item.get("aliases")
        entries.append(
            PublishedVersion(
                version=version.strip(),
                title=title if isinstance(title, str) else version,
                aliases=tuple(a for a in aliases if isinstance(a, str))
                if isinstance(aliases, list)
                else (),
            )
        )
    if not entries:
        raise SourceError(f"{source}: versions.json lists no versions")
    return entries


def resolve_version(
    entries: Sequence[PublishedVersion], requested: str, *, fallback_latest: bool = False
) -> ResolvedRelease:
    """The published docs for ``requested``.

    Tried in order: the exact version string, an alias (``latest``), the PEP 440-normalized
    version (so an installed ``1.2.0rc1`` finds docs published as ``1.2.0-rc1``, and a leading
    ``v`` is ignored); then a development placeholder (``0.0.1``), or any version with
    ``fallback_latest``, takes the entry aliased ``latest`` (the newest entry if none is).

    Raises:
        ReleaseNotFoundError: nothing matched and no fallback applies.
    """
    wanted = requested.strip()
    for entry in entries:
        if entry.version == wanted:
            return ResolvedRelease(requested, entry, "exact")
    for entry in entries:
        if wanted in entry.aliases:
            return ResolvedRelease(requested, entry, "alias")
    normalized = _normalize(wanted)
    if normalized is not None:
        for entry in entries:
            if _normalize(entry.version) == normalized:
                return ResolvedRelease(requested, entry, "normalized")
    if wanted in DEVELOPMENT_VERSIONS or fallback_latest:
        latest = next((e for e in entries if LATEST in e.aliases), entries[0])
        return ResolvedRelease(
            requested, latest, "development" if wanted in DEVELOPMENT_VERSIONS else "fallback"
        )
    shown = ", ".join(entry.version for entry in entries[:8])
    more = f" and {len(entries) - 8} more" if len(entries) > 8 else ""
    raise ReleaseNotFoundError(
        f"release {wanted!r} is not published (versions: {shown}{more}); "
        "use --fallback latest to answer from the latest docs"
    )


def _normalize(version: str) -> Version | None:
    try:
        return Version(version)
    except InvalidVersion:
        return None
