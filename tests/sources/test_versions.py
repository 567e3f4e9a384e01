"""Resolving a requested version against versions.json: tags, aliases, pre-releases, fallbacks."""

from __future__ import annotations

import json

import pytest

from citewise.errors import ReleaseNotFoundError, SourceError
from citewise.sources.versions import (
    PublishedVersion,
    parse_versions,
    resolve_slug,
    resolve_version,
    slug_candidates,
)

from ..conftest import LGOS, require

ENTRIES = [
    PublishedVersion("2.0.0", "2.0.0", ("latest",)),
    PublishedVersion("1.2.0-rc1", "1.2.0 RC 1"),
    PublishedVersion("1.1.0", "1.1.0", ("stable",)),
    PublishedVersion("1.0.0", "1.0.0"),
    PublishedVersion("dev", "Development"),
]


@pytest.mark.parametrize(
    ("requested", "fallback", "version", "how"),
    [
        ("1.0.0", False, "1.0.0", "exact"),
        ("dev", False, "dev", "exact"),
        ("latest", False, "2.0.0", "alias"),
        ("stable", False, "1.1.0", "alias"),
        ("1.2.0rc1", False, "1.2.0-rc1", "normalized"),
        ("1.2.0.rc1", False, "1.2.0-rc1", "normalized"),
        ("v1.1.0", False, "1.1.0", "normalized"),
        ("1.0", False, "1.0.0", "normalized"),
        ("0.0.1", False, "2.0.0", "development"),
        ("0.0.0", False, "2.0.0", "development"),
        ("9.9.9", True, "2.0.0", "fallback"),
        ("1.0.0", True, "1.0.0", "exact"),
    ],
)
def test_resolution(requested: str, fallback: bool, version: str, how: str) -> None:
    resolved = resolve_version(ENTRIES, requested, fallback_latest=fallback)
    assert (resolved.version, resolved.how, resolved.requested) == (version, how, requested)
    assert resolved.is_fallback == (how in ("development", "fallback"))


def test_a_published_rc_tag_is_found_from_the_tag_spelling_too() -> None:
    entries = [PublishedVersion("1.2.0rc1", "1.2.0rc1")]
    assert resolve_version(entries, "1.2.0-rc1").version == "1.2.0rc1"


def test_without_a_latest_alias_the_newest_entry_stands_in() -> None:
    entries = [PublishedVersion("3.0.0", "3.0.0"), PublishedVersion("2.0.0", "2.0.0")]
    assert resolve_version(entries, "0.0.1").version == "3.0.0"


def test_an_unpublished_version_is_a_clear_error() -> None:
    with pytest.raises(ReleaseNotFoundError) as error:
        resolve_version(ENTRIES, "1.3.0")
    message = str(error.value)
    assert "'1.3.0' is not published" in message
    assert "2.0.0, 1.2.0-rc1" in message and "--fallback latest" in message


def test_the_shared_lgos_versions_json_resolves_latest_and_a_placeholder() -> None:
    data = require(LGOS / "_site_gh-pages" / "versions.json").read_bytes()
    entries = parse_versions(data, "versions.json")
    assert entries[0] == PublishedVersion("0.12.0", "0.12.0", ("latest",))
    assert resolve_version(entries, "0.0.1").version == "0.12.0"
    assert resolve_version(entries, "0.11.1").how == "exact"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"<html>not json", "invalid JSON"),
        (json.dumps({"version": "1.0"}).encode(), "expected a list"),
        (json.dumps([{"title": "x"}]).encode(), "an entry has no version"),
        (b"[]", "lists no versions"),
    ],
)
def test_malformed_versions_json_names_its_source(data: bytes, message: str) -> None:
    with pytest.raises(SourceError, match=message) as error:
        parse_versions(data, "https://site.example/versions.json")
    assert "https://site.example/versions.json" in str(error.value)


def test_missing_titles_and_aliases_are_tolerated() -> None:
    entries = parse_versions(b'[{"version": "1.0"}]', "v.json")
    assert entries == [PublishedVersion("1.0", "1.0", ())]


# -- Read the Docs version slugs ---------------------------------------------------------------


def test_slug_candidates_go_from_the_tag_to_its_release_line_to_stable() -> None:
    assert [slug for slug, _ in slug_candidates("8.5.0")] == [
        "8.5.0", "v8.5.0", "8.5.x", "8.5", "8.x", "stable", "latest"
    ]  # fmt: skip
    assert slug_candidates("26.3")[:3] == [
        ("26.3", "exact"),
        ("v26.3", "exact"),
        ("26.3.x", "branch"),
    ]


@pytest.mark.parametrize(
    ("slugs", "requested", "slug", "how"),
    [
        (["latest", "stable", "26.3", "26.2"], "26.3", "26.3", "exact"),
        (["latest", "v2.34.2"], "2.34.2", "v2.34.2", "exact"),
        (["latest", "stable", "8.5.x", "8.4.x"], "8.5.0", "8.5.x", "branch"),
        (["latest", "1.2.0-rc1"], "1.2.0rc1", "1.2.0-rc1", "normalized"),
        (["latest", "stable"], "9.0", "stable", "fallback"),
    ],
)
def test_a_read_the_docs_slug_is_resolved(
    slugs: list[str], requested: str, slug: str, how: str
) -> None:
    found = resolve_slug(slugs, requested)
    assert found is not None and (found.version, found.how) == (slug, how)


def test_no_slug_for_a_project_without_stable_or_latest() -> None:
    assert resolve_slug(["main"], "9.0") is None
