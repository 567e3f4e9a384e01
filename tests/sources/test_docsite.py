"""How a docs site publishes versions, found from the site itself (served on 127.0.0.1)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from citewise.config import Settings
from citewise.errors import ReleaseNotFoundError
from citewise.sources.docsite import PublishedDocs
from citewise.sources.release import ReleaseSpec, fetch_release

from .conftest import LocalSite, versions_json, widget_archive

ARCHIVE_PATH = "/{owner}/{repo}/archive/refs/tags/v{version}.tar.gz"
RTD_HEADERS = {"X-RTD-Project": "widgets"}


def published(
    site: LocalSite, settings: Settings, version: str = "2.0.0", **options: Any
) -> PublishedDocs:
    site.files[f"/acme/widgets/archive/refs/tags/v{version}.tar.gz"] = widget_archive(version)
    spec = ReleaseSpec.parse(
        f"acme/widgets@{version}", archive_url=site.base + ARCHIVE_PATH, **options
    )
    return fetch_release(spec, settings).published


def test_a_docs_link_to_one_read_the_docs_version_finds_the_installed_one(
    site: LocalSite, settings: Settings
) -> None:
    site.headers.update(RTD_HEADERS | {"X-RTD-Version": "latest"})
    site.files["/en/latest/"] = b"<html></html>"
    site.files["/_/addons/"] = json.dumps(
        {"versions": {"active": [{"slug": "latest"}, {"slug": "v2.0.0"}]}}
    ).encode()
    docs = published(site, settings, site_hint=site.url("/en/latest/"))
    assert (docs.layout, docs.base, docs.resolved.how) == (
        "readthedocs", site.url("/en/v2.0.0/"), "exact"
    )  # fmt: skip


def test_a_given_read_the_docs_version_root_is_cited_as_given(
    site: LocalSite, settings: Settings
) -> None:
    site.headers.update(RTD_HEADERS | {"X-RTD-Version": "2.0.x"})
    site.files["/en/2.0.x/"] = b"<html></html>"
    docs = published(site, settings, site_url=site.url("/en/2.0.x/"))
    assert (docs.base, docs.resolved.how) == (site.url("/en/2.0.x/"), "given")
    assert not any(path.startswith("/_/addons/") for path in site.requests)


def test_read_the_docs_without_translations_or_with_one_version(
    site: LocalSite, settings: Settings
) -> None:
    site.headers.update(RTD_HEADERS | {"X-RTD-Version": "stable"})
    site.redirects["/"] = "/stable/"
    site.files["/stable/"] = site.files["/2.0.0/"] = b"<html></html>"
    assert published(site, settings, site_hint=site.url("/")).base == site.url("/2.0.0/")
    other = LocalSite()
    try:
        other.headers.update(RTD_HEADERS | {"X-RTD-Version": "latest"})
        other.files["/"] = b"<html></html>"  # single version: the root is the docs
        docs = published(other, settings, site_hint=other.url("/"))
        assert (docs.layout, docs.base) == ("readthedocs", other.url("/"))
    finally:
        other.stop()


def test_stable_stands_in_and_latest_only_when_asked(site: LocalSite, settings: Settings) -> None:
    site.headers.update(RTD_HEADERS)
    site.redirects["/"] = "/en/latest/"
    site.files["/en/latest/"] = b"<html></html>"
    site.files["/_/addons/"] = json.dumps({"versions": {"active": [{"slug": "latest"}]}}).encode()
    with pytest.raises(ReleaseNotFoundError, match="Read the Docs versions of widgets: latest"):
        published(site, settings, site_hint=site.url("/"))
    docs = published(site, settings, site_hint=site.url("/"), fallback_latest=True)
    assert (docs.base, docs.resolved.how) == (site.url("/en/latest/"), "fallback")


def test_a_docs_link_to_a_mike_alias_uses_the_sites_versions_json(
    site: LocalSite, settings: Settings
) -> None:
    site.files["/widgets/versions.json"] = versions_json(("2.0.0", ["latest"]))
    site.files["/widgets/latest/"] = b"<html></html>"
    docs = published(site, settings, site_hint=site.url("/widgets/latest/"))
    assert (docs.layout, docs.base) == ("mike", site.url("/widgets/2.0.0/"))


def test_each_site_is_resolved_on_its_own_and_then_from_the_cache(
    site: LocalSite, settings: Settings
) -> None:
    site.files["/a/versions.json"] = versions_json(("2.0.0", []))
    site.files["/b/"] = b"<html></html>"
    assert published(site, settings, site_hint=site.url("/a/")).layout == "mike"
    # Another site of the same repository: the versions.json cached for the first is not its.
    assert published(site, settings, site_hint=site.url("/b/")).base == site.url("/b/")
    asked = len(site.requests)
    assert published(site, settings, site_hint=site.url("/a/")).base == site.url("/a/2.0.0/")
    assert published(site, settings, site_hint=site.url("/b/")).layout == "unversioned"
    assert len(site.requests) == asked  # both answered from the cache
