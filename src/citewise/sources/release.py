"""Fetches the docs of one published release: docs site → tag archive → docs folder.

Where the release's docs are published (a mike site's versions.json, Read the Docs, an
unversioned site) is ``citewise.sources.docsite``'s; indexing the folder is the service
layer's (``citewise.kb.releases``). Everything fetched is cached per release under
``{CITEWISE_HOME}/releases/{owner}/{repo}/``: ``versions.json``, ``docs-sites.json`` (how each
site was resolved), ``{release}/archive.tar.gz`` and ``{release}/source/`` (the extracted docs
folder and site config). A second run finds all of it and makes no request; the cached
versions.json is fetched again only when it does not know the requested version (or with
``refresh``).
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from citewise.config import Settings
from citewise.errors import (
    ConfigurationError,
    DocsFolderMissingError,
    DownloadError,
    ReleaseNotFoundError,
    SourceError,
)
from citewise.sources.archive import ExtractLimits, extract_docs, skipped_links
from citewise.sources.docsite import LAYOUTS, Probe, PublishedDocs, SiteRequest, resolve_docs
from citewise.sources.nav import ScopeRule
from citewise.sources.versions import ResolvedRelease

__all__ = [
    "DEFAULT_ARCHIVE_URLS",
    "DEFAULT_SITE_URL",
    "DEFAULT_VERSIONS_URL",
    "FetchLimits",
    "FetchedRelease",
    "ReleaseSpec",
    "fetch_release",
    "release_kb_name",
]

MIB = 1024 * 1024
DEFAULT_SITE_URL = "https://{owner}.github.io/{repo}/"
DEFAULT_VERSIONS_URL = "{site_url}versions.json"
# GitHub's tag archives; tags are usually v-prefixed, some projects tag the bare version.
DEFAULT_ARCHIVE_URLS = (
    "https://github.com/{owner}/{repo}/archive/refs/tags/v{version}.tar.gz",
    "https://github.com/{owner}/{repo}/archive/refs/tags/{version}.tar.gz",
)
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_SEGMENT = re.compile(r"^[A-Za-z0-9_+-][A-Za-z0-9_.+-]*$")


@dataclass(frozen=True)
class ReleaseSpec:
    """Which release to index and where to find it.

    URL templates take ``{owner}``, ``{repo}``, ``{site_url}`` and (archives) ``{version}``,
    the release as versions.json names it. ``archive_url`` None tries GitHub's ``v{version}``
    then ``{version}`` tag archives.

    ``site_url`` is the docs site the user named (used as given); ``site_hint`` the one the
    package's metadata links to; with neither, ``https://{owner}.github.io/{repo}/``.
    ``layout`` (one of :data:`~citewise.sources.docsite.LAYOUTS`) and ``docs_version`` (the
    version segment of page URLs, ``""`` for none) skip the detection of how that site
    publishes versions.
    """

    owner: str
    repo: str
    version: str
    site_url: str | None = None
    versions_url: str | None = None
    archive_url: str | None = None
    fallback_latest: bool = False
    docs_dir: str = "docs"
    scope_rule: ScopeRule = field(default_factory=ScopeRule)
    layout: str = "auto"
    docs_version: str | None = None
    site_hint: str | None = None
    # The page URL form (``dirhtml``, ``html``) when the docs' config cannot tell; None: read it.
    page_form: str | None = None
    # Where the release's dependencies are installed (a site-packages): the API reference
    # reads bases from another distribution there, as the site's build did.
    api_dependencies: tuple[Path, ...] = ()

    @classmethod
    def parse(cls, text: str, **options: Any) -> ReleaseSpec:
        """``OWNER/REPO@VERSION`` (e.g. ``ilkersigirci/langgraph-openai-serve@0.12.0``)."""
        repo_part, at, version = text.strip().partition("@")
        owner, slash, repo = repo_part.partition("/")
        if not (at and slash and version.strip()):
            raise ConfigurationError(f"invalid release {text!r}: use OWNER/REPO@VERSION")
        return cls(owner.strip(), repo.strip(), version.strip(), **options)

    def __post_init__(self) -> None:
        for part in (self.owner, self.repo):
            if not _NAME.match(part) or part in (".", ".."):
                raise ConfigurationError(f"invalid release repository {self.name!r}")
        if self.layout not in LAYOUTS:
            raise ConfigurationError(
                f"unknown site layout {self.layout!r} (known: {', '.join(LAYOUTS)})"
            )
        for url in (self.site_url, self.site_hint):
            if url and urlsplit(url).scheme not in ("http", "https"):
                raise ConfigurationError(f"invalid site URL {url!r}: use http(s)://HOST/PATH/")

    # The choices a knowledge base remembers (``citewise.kb.releases``): the fields a user set.
    CHOICES = (
        "site_url", "versions_url", "archive_url", "layout", "docs_version", "docs_dir",
        "page_form",
    )  # fmt: skip

    def choices(self) -> dict[str, str]:
        """The location choices made for this release (those not left at their default)."""
        defaults = ReleaseSpec(self.owner, self.repo, self.version)
        return {
            name: str(getattr(self, name))
            for name in self.CHOICES
            if getattr(self, name) != getattr(defaults, name)
        }

    def with_choices(self, remembered: dict[str, str]) -> ReleaseSpec:
        """This spec, with each remembered choice it leaves at its default filled in."""
        chosen = self.choices()
        fill: dict[str, Any] = {
            k: v for k, v in remembered.items() if k in self.CHOICES and k not in chosen
        }
        return replace(self, **fill) if fill else self

    @property
    def name(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def site(self) -> str:
        """The docs site's root URL, ending with ``/``."""
        url = (
            self.site_url
            or self.site_hint
            or DEFAULT_SITE_URL.format(owner=self.owner, repo=self.repo)
        )
        return url if url.endswith("/") else url + "/"

    @property
    def site_source(self) -> str:
        """Where :attr:`site` comes from: ``given``, ``metadata`` or ``default``."""
        return "given" if self.site_url else "metadata" if self.site_hint else "default"

    def versions_location(self) -> str:
        template = self.versions_url or DEFAULT_VERSIONS_URL
        return template.format(owner=self.owner, repo=self.repo, site_url=self.site)

    def archive_locations(self, version: str) -> tuple[str, ...]:
        templates = (self.archive_url,) if self.archive_url else DEFAULT_ARCHIVE_URLS
        values = {"owner": self.owner, "repo": self.repo, "site_url": self.site}
        return tuple(t.format(version=version, **values) for t in templates)


@dataclass(frozen=True)
class FetchLimits:
    """Network and size caps for fetching a release."""

    timeout: float = 30.0  # per read: the longest silence allowed
    total_timeout: float = 600.0  # per download: a server trickling bytes cannot stall us
    max_archive_bytes: int = 200 * MIB
    max_versions_bytes: int = 2 * MIB
    extract: ExtractLimits = field(default_factory=ExtractLimits)


@dataclass(frozen=True)
class FetchedRelease:
    """A release's docs on disk, where they are published and how the version was resolved."""

    spec: ReleaseSpec
    published: PublishedDocs
    docs: Path
    archive: Path
    requests: int  # HTTP requests this fetch made: 0 when everything was cached
    skipped_links: dict[str, str] = field(default_factory=dict)  # archive links left out

    @property
    def resolved(self) -> ResolvedRelease:
        return self.published.resolved

    @property
    def version(self) -> str:
        """The release whose source is indexed (its tag archive's version)."""
        return self.published.release

    def meta(self) -> dict[str, str]:
        """What a knowledge base records about its release (answers can report it)."""
        return {
            "release": self.version,
            "requested_version": self.resolved.requested,
            "release_match": self.resolved.how,
            "release_repo": self.spec.name,
            "release_layout": self.published.layout,
            "release_docs_version": self.published.version,
        }


def release_kb_name(repo: str, release: str) -> str:
    """The default knowledge base name of a release: ``{repo}-{release}``, lowercased."""
    name = re.sub(r"[^a-z0-9._-]+", "-", f"{repo}-{release}".lower()).lstrip("._-")
    return name[:64] or "release"


def fetch_release(
    spec: ReleaseSpec,
    settings: Settings,
    *,
    client: httpx.Client | None = None,
    limits: FetchLimits | None = None,
    refresh: bool = False,
) -> FetchedRelease:
    """Resolve ``spec`` and make its docs folder available, from the cache when it has it.

    Raises:
        ReleaseNotFoundError: the version is not in versions.json (and no fallback applies),
            versions.json is missing, or the release's tag archive is not published.
        DownloadError: a network error, an HTTP error or a size cap (names the URL).
        UnsafeArchiveError, DocsFolderMissingError: the archive was refused; it is not kept,
            so the next call downloads it again.
    """
    limits = limits or FetchLimits()
    http = _Http(client, limits)
    try:
        root = settings.home / "releases" / spec.owner / spec.repo
        versions_url = spec.versions_location() if spec.versions_url else ""
        request = SiteRequest(
            spec.site, spec.version, spec.layout, versions_url, spec.docs_version,
            spec.fallback_latest, spec.site_source,
        )  # fmt: skip
        published = resolve_docs(request, root, http, refresh)
        release = published.release
        if not _SEGMENT.match(release):
            raise SourceError(f"{spec.site}: unsafe version name {release!r}")
        folder = root / release
        source = folder / (
            "source" if spec.docs_dir == "docs" else _safe(f"source-{spec.docs_dir}")
        )
        archive = next(folder.glob("archive.*"), folder / "archive.tar.gz")
        if not source.is_dir():
            if not archive.is_file():
                archive = _download_archive(spec, release, folder, http)
            try:
                extract_docs(archive, source, docs_dir=spec.docs_dir, limits=limits.extract)
                _extract_source(archive, source, limits.extract)
            except SourceError:
                archive.unlink(missing_ok=True)  # a refused archive must be fetched anew
                raise
        docs = source / spec.docs_dir
        return FetchedRelease(spec, published, docs, archive, http.requests, skipped_links(source))
    finally:
        http.close()


class _Http:
    """An httpx client made on first use (a cached run never opens one), counting requests."""

    def __init__(self, client: httpx.Client | None, limits: FetchLimits) -> None:
        self._client = client
        self._own = client is None
        self.limits = limits
        self.requests = 0

    @property
    def max_versions_bytes(self) -> int:
        return self.limits.max_versions_bytes

    def _open(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(
                timeout=self.limits.timeout,
                follow_redirects=True,
                headers={"User-Agent": "citewise"},
            )
        return self._client

    def probe(self, url: str, max_bytes: int) -> Probe:
        """GET ``url`` (redirects followed) for its status, final URL, headers and at most
        ``max_bytes`` of its body; any status is an answer, only a network error raises."""
        client = self._open()
        self.requests += 1
        body = bytearray()
        try:
            with client.stream("GET", url) as response:
                for block in response.iter_bytes():
                    body += block
                    if len(body) >= max_bytes:
                        break
                headers = {k.lower(): v for k, v in response.headers.items()}
                return Probe(
                    response.status_code, str(response.url), headers, bytes(body[:max_bytes])
                )
        except httpx.TimeoutException:
            raise DownloadError(f"timed out fetching {url}") from None
        except httpx.HTTPError as error:
            raise DownloadError(f"network error fetching {url}: {error}") from None

    def get(self, url: str, target: Path, max_bytes: int) -> int:
        """Stream ``url`` into ``target`` atomically; returns the HTTP status (404 writes
        nothing)."""
        client = self._open()
        target.parent.mkdir(parents=True, exist_ok=True)
        self._remove_stale_parts(target)
        part = target.with_name(f".{target.name}.{uuid.uuid4().hex}.part")
        self.requests += 1
        deadline = time.monotonic() + self.limits.total_timeout
        try:
            with client.stream("GET", url) as response:
                if response.status_code == 404:
                    return 404
                if response.status_code >= 400:
                    raise DownloadError(f"HTTP {response.status_code} fetching {url}")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise DownloadError(f"{url} is {_size(int(declared))}, over the cap")
                size = 0
                with part.open("wb") as out:
                    for block in response.iter_bytes():
                        size += len(block)
                        if size > max_bytes:
                            raise DownloadError(f"{url} is over the {_size(max_bytes)} cap")
                        if time.monotonic() > deadline:
                            raise DownloadError(
                                f"fetching {url} took longer than "
                                f"{self.limits.total_timeout:g} s (received {_size(size)})"
                            )
                        out.write(block)
            os.replace(part, target)
            return response.status_code
        except httpx.TimeoutException:
            raise DownloadError(f"timed out fetching {url}") from None
        except httpx.HTTPError as error:
            raise DownloadError(f"network error fetching {url}: {error}") from None
        finally:
            part.unlink(missing_ok=True)

    def _remove_stale_parts(self, target: Path) -> None:
        """Partial files a killed run left behind (a live download's is younger than the
        longest a download may take, so it is kept)."""
        oldest = time.time() - self.limits.total_timeout - self.limits.timeout
        for stale in target.parent.glob(f".{target.name}.*.part"):
            try:
                if stale.stat().st_mtime < oldest:
                    stale.unlink()
            except FileNotFoundError:
                pass

    def close(self) -> None:
        if self._own and self._client is not None:
            self._client.close()


def _download_archive(spec: ReleaseSpec, release: str, folder: Path, http: _Http) -> Path:
    urls = spec.archive_locations(release)
    for url in urls:
        suffix = ".zip" if urlsplit(url).path.endswith(".zip") else ".tar.gz"
        target = folder / f"archive{suffix}"
        if http.get(url, target, http.limits.max_archive_bytes) != 404:
            return target
    raise ReleaseNotFoundError(
        f"release {release} of {spec.name} has published docs but its source archive is not "
        f"published: {', '.join(urls)} (HTTP 404); give --archive-url"
    )


def _extract_source(archive: Path, source: Path, limits: ExtractLimits) -> None:
    """Extract the archive's ``src/`` beside the docs, for the API reference (mkdocstrings,
    Sphinx autodoc); an archive without one keeps only its docs."""
    staging = source.parent / f".src-{uuid.uuid4().hex}"
    try:
        extract_docs(archive, staging, docs_dir="src", limits=limits)
    except DocsFolderMissingError:
        return
    try:
        os.replace(staging / "src", source / "src")
    except OSError:
        pass  # another process put it there first
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _size(count: int) -> str:
    return f"{count / MIB:.1f} MiB" if count >= MIB // 10 else f"{count} bytes"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)
