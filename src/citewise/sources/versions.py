"""Resolves a requested version against what a docs site publishes: the versions.json of mike
and Zensical, or the version slugs of Read the Docs (``26.3``, ``v2.34.2``, ``8.5.x``, ``stable``).
"""

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
    "resolve_slug",
    "resolve_version",
    "slug_candidates",
]

LATEST = "latest"
STABLE = "stable"  # Read the Docs: the newest release
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
    ``1.2.0-rc1``), ``branch`` (the docs of its release line, ``8.5.x``), ``development`` (a
    placeholder version), ``fallback`` (absent: the latest or stable docs), ``given`` (the
    version segment named by the user) or ``unversioned`` (a site with no version segment).
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


def slug_candidates(requested: str) -> list[tuple[str, str]]:
    """The Read the Docs version slugs that may publish ``requested``, best first, with how
    each matches: the version and its tag (``26.3``, ``v26.3``), its release line's branches
    (``26.3.x``, ``26.x``), then ``stable`` and ``latest``."""
    wanted = requested.strip().lower()
    found: list[tuple[str, str]] = []
    if wanted:
        bare = wanted[1:] if wanted.startswith("v") else wanted
        found += [(bare, "exact"), (f"v{bare}", "exact")]
        parsed = _normalize(bare)
        if parsed is not None and not parsed.is_devrelease:
            release = parsed.release
            if len(release) >= 2:
                major_minor = f"{release[0]}.{release[1]}"
                found += [(f"{major_minor}.x", "branch"), (major_minor, "branch")]
            found.append((f"{release[0]}.x", "branch"))
    found += [(STABLE, "fallback"), (LATEST, "fallback")]
    unique: dict[str, str] = {}
    for slug, how in found:
        unique.setdefault(slug, how)
    return list(unique.items())


def resolve_slug(slugs: Sequence[str], requested: str) -> ResolvedRelease | None:
    """The Read the Docs version among ``slugs`` (the project's active versions) for
    ``requested``: exact, PEP 440-equal (``v1.2.0rc1`` for ``1.2.0rc1``), its release line's
    branch, then ``stable`` and ``latest``; None when none of them is published."""
    published = {slug.strip().lower(): slug.strip() for slug in slugs if slug.strip()}
    candidates = slug_candidates(requested)
    wanted = _normalize(requested.strip())
    for slug, how in candidates:
        if how == "exact" and slug in published:
            return ResolvedRelease(requested, _slug(published[slug]), how)
    for key, original in published.items():
        if wanted is not None and _normalize(key) == wanted:
            return ResolvedRelease(requested, _slug(original), "normalized")
    for slug, how in candidates:
        if how != "exact" and slug in published:
            return ResolvedRelease(requested, _slug(published[slug]), how)
    return None


def _slug(slug: str) -> PublishedVersion:
    return PublishedVersion(slug, slug)
