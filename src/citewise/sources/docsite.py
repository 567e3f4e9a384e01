"""Where a release's docs are published, and under which version segment of its site's URLs.

Four layouts, told apart from the site itself when none is named:

- ``mike``: a versions.json at the site root (mike, Zensical) lists the published versions;
  pages are under ``{site}{version}/``.
- ``readthedocs``: Read the Docs, on ``*.readthedocs.io`` or behind a custom domain (its
  responses carry ``X-RTD-*`` headers and ``readthedocs-*`` meta tags); pages are under
  ``{site}{language}/{slug}/``, the slug a tag (``26.3``, ``v2.34.2``), a branch (``8.5.x``) or
  ``stable``/``latest``. The slugs published are read from the ``/_/addons/`` API, else each
  candidate page is asked for in turn.
- ``unversioned``: a site without either (plain MkDocs or Sphinx): its root is the docs of the
  current release, with no version segment.
- ``given``: the user named the version segment (``--version``; ``""`` for none).

A resolution is cached per site and requested version, so a second run asks nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, urlsplit

from citewise.errors import DownloadError, ReleaseNotFoundError, SourceError
from citewise.sources.versions import (
    PublishedVersion,
    ResolvedRelease,
    parse_versions,
    resolve_slug,
    resolve_version,
    slug_candidates,
)

__all__ = ["LAYOUTS", "Probe", "PublishedDocs", "SiteRequest", "resolve_docs"]

LAYOUTS = ("auto", "mike", "readthedocs", "unversioned")
_PROBE_BYTES = 256 * 1024  # enough for a page's <head>
_RTD_HOSTS = (".readthedocs.io", ".readthedocs.org", ".readthedocs-hosted.com")
_RTD_META = re.compile(
    rb"<meta\s+name=[\"']readthedocs-(project|version)-slug[\"']\s+content=[\"']([^\"']+)", re.I
)
_VERSION_LIKE = re.compile(r"^(?:latest|stable|dev|main|master|v?\d+(?:\.[\w-]+)*)$", re.I)
_LANGUAGE = re.compile(r"^[a-z]{2,3}(?:[-_][a-zA-Z]{2,4})?$")
_SEGMENT = re.compile(r"^[A-Za-z0-9_+-][A-Za-z0-9_.+-]*$")
_CACHE = "docs-sites.json"


@dataclass(frozen=True)
class Probe:
    """What one GET of a page told: status, the URL it ended at, headers, the body's start."""

    status: int
    url: str
    headers: dict[str, str]  # lowercased names
    body: bytes


class Fetcher(Protocol):
    """The HTTP client of a release fetch (``citewise.sources.release``)."""

    def get(self, url: str, target: Path, max_bytes: int) -> int: ...

    def probe(self, url: str, max_bytes: int) -> Probe: ...

    @property
    def max_versions_bytes(self) -> int: ...


@dataclass(frozen=True)
class SiteRequest:
    """What to resolve: a site, the release version and the choices the user made."""

    site: str  # the site root, ending with "/"
    version: str  # the release, as installed or named
    layout: str = "auto"
    versions_url: str = ""  # mike's versions.json ("" = {site}versions.json)
    docs_version: str | None = None  # a given version segment ("" = none)
    fallback_latest: bool = False
    site_source: str = "given"  # how the site was found: given, metadata or default


@dataclass(frozen=True)
class PublishedDocs:
    """Where a release's pages are: ``site_url`` and ``version`` as ``index_folder`` takes
    them (page URLs ``{site_url}{version}/{page}``, or ``{site_url}{page}`` when ``version``
    is empty)."""

    layout: str
    site_url: str
    version: str
    resolved: ResolvedRelease

    @property
    def base(self) -> str:
        return f"{self.site_url}{self.version}/" if self.version else self.site_url

    @property
    def release(self) -> str:
        """The version whose source archive holds these docs: versions.json's entry for a
        mike site (it may be the latest, for a placeholder), else the requested one."""
        return self.resolved.version if self.layout == "mike" else self.resolved.requested


def resolve_docs(request: SiteRequest, cache: Path, http: Fetcher, refresh: bool) -> PublishedDocs:
    """Where ``request``'s docs are published, from the cache in ``cache`` when it knows.

    Raises:
        ReleaseNotFoundError: nothing publishes that version (the message names what was
            tried and which flag fixes it).
        DownloadError: a network or HTTP error on a request that had to succeed.
    """
    if request.docs_version is not None:
        segment = request.docs_version.strip().strip("/")
        if segment and not all(_SEGMENT.match(part) for part in segment.split("/")):
            raise SourceError(f"invalid --version {request.docs_version!r}: use a URL segment")
        how = "given" if segment else "unversioned"
        entry = PublishedVersion(segment or request.version, segment or request.version)
        resolved = ResolvedRelease(request.version, entry, how)
        return PublishedDocs("given", request.site, segment, resolved)
    if request.layout == "unversioned":
        return _unversioned(request)
    key = json.dumps([asdict(request)[k] for k in ("site", "version", "layout", "versions_url")])
    known = {} if refresh else _read_cache(cache)
    cached_layout = known.get(key, {}).get("layout")
    if cached_layout and cached_layout != "mike":
        return _from_cache(known[key], request)
    if cached_layout == "mike":  # found before, maybe at the root above a version's link
        request = replace(request, site=str(known[key]["site_url"]))
    if request.layout == "mike" or request.versions_url or cached_layout == "mike":
        found = _mike(request, cache, http, refresh, required=True, tried=[])
        assert found is not None  # required: it raises instead
        return found  # versions.json is its cache
    found = _detect(request, cache, http)
    _write_cache(cache, key, found)
    return found


def _detect(request: SiteRequest, cache: Path, http: Fetcher) -> PublishedDocs:
    """The layout found from the site: versions.json asked for anew (a cached one may be
    another site's), then the root page."""
    tried: list[str] = []
    if request.layout == "readthedocs" or _is_rtd_host(request.site):
        return _readthedocs(request, http, None, tried)
    mike = _mike(request, cache, http, True, required=False, tried=tried)
    if mike is not None:
        return mike
    parts = [part for part in urlsplit(request.site).path.split("/") if part]
    if request.site_source != "given" and parts and _VERSION_LIKE.match(parts[-1]):
        # A docs link to one version of a mike site (``…/latest/``): its root has the list.
        parent = replace(request, site=_with_path(request.site, parts[:-1]))
        mike = _mike(parent, cache, http, True, required=False, tried=tried)
        if mike is not None:
            return mike
    try:
        page = http.probe(request.site, _PROBE_BYTES)
    except DownloadError as error:
        tried.append(f"{request.site} ({error})")
        raise _nothing_found(request, tried) from None
    if _rtd_signals(page):
        return _readthedocs(request, http, page, tried)
    if page.status == 200:
        return _unversioned(request)
    tried.append(f"{request.site} (HTTP {page.status})")
    raise _nothing_found(request, tried)


def _mike(
    request: SiteRequest,
    cache: Path,
    http: Fetcher,
    refresh: bool,
    *,
    required: bool,
    tried: list[str],
) -> PublishedDocs | None:
    """The version in a mike site's versions.json; None (when not ``required``) if the site
    has none."""
    url = request.versions_url or f"{request.site}versions.json"
    cached = cache / "versions.json"
    entries = None
    if cached.is_file() and not refresh:
        try:
            entries = parse_versions(cached.read_bytes(), str(cached))
            found = resolve_version(
                entries, request.version, fallback_latest=request.fallback_latest
            )
        except SourceError:
            entries = None  # a release published since the cache was written: ask again
        else:
            return PublishedDocs("mike", request.site, found.version, found)
    try:
        status = http.get(url, cached, http.max_versions_bytes)
    except DownloadError as error:
        if required:
            raise
        tried.append(f"{url} ({error})")
        return None
    if status == 404:
        if required:
            raise ReleaseNotFoundError(
                f"no versions.json at {url} (HTTP 404): the site publishes no mike versions "
                "there; set --site-url, --versions-url, or --version '' for an unversioned site"
            )
        tried.append(f"{url} (HTTP 404)")
        return None
    try:
        entries = parse_versions(cached.read_bytes(), url)
    except SourceError as error:
        cached.unlink(missing_ok=True)
        if required:
            raise
        tried.append(f"{url} ({error})")
        return None
    found = resolve_version(entries, request.version, fallback_latest=request.fallback_latest)
    return PublishedDocs("mike", request.site, found.version, found)


def _readthedocs(
    request: SiteRequest, http: Fetcher, page: Probe | None, tried: list[str]
) -> PublishedDocs:
    """The Read the Docs version slug for the release, under the site's language."""
    if page is None:
        try:
            page = http.probe(request.site, _PROBE_BYTES)
        except DownloadError as error:
            tried.append(f"{request.site} ({error})")
            raise _nothing_found(request, tried, layout="Read the Docs") from None
    project, current = _rtd_slugs(page)
    site_path = [part for part in urlsplit(request.site).path.split("/") if part]
    path = [part for part in urlsplit(page.url).path.split("/") if part]
    extra = path[len(site_path) :] if path[: len(site_path)] == site_path else []
    if current and site_path and site_path[-1] == current:
        if request.site_source == "given":
            # The site given is one version's root already (``…/en/26.3/``): cite it so.
            entry = PublishedVersion(current, current)
            return PublishedDocs("readthedocs", request.site, "", ResolvedRelease(
                request.version, entry, "given"))  # fmt: skip
        # A docs link to one version (``…/en/latest/``): the installed version is wanted.
        keep = 2 if len(site_path) >= 2 and _LANGUAGE.match(site_path[-2]) else 1
        extra, site_path = site_path[-keep:], site_path[:-keep]
        request = replace(request, site=_with_path(request.site, site_path))
    # Read the Docs' URL schemes: /{language}/{version}/ (the default), /{version}/ (no
    # translations), or one version at the root (single version): the root did not move.
    if len(extra) >= 2 and _LANGUAGE.match(extra[0]):
        root = f"{request.site}{extra[0]}/"
    elif len(extra) == 1 and current and extra[0] == current:
        root = request.site
    elif not extra and page.status == 200:
        return _unversioned(request, layout="readthedocs")
    else:
        root = f"{request.site}en/"
    slugs = _addons_versions(request.site, project, current, http, tried) if project else None
    if slugs is not None:
        found = resolve_slug(slugs, request.version)
        if found is not None and (found.how != "fallback" or _fallback_ok(found, request)):
            return PublishedDocs("readthedocs", root, found.version, found)
        tried.append(f"Read the Docs versions of {project}: {', '.join(slugs[:12]) or 'none'}")
    else:
        for slug, how in slug_candidates(request.version):
            if how == "fallback" and not _fallback_ok(None, request, slug):
                continue
            url = f"{root}{quote(slug)}/"
            try:
                status = http.probe(url, 0).status
            except DownloadError as error:
                tried.append(f"{url} ({error})")
                continue
            if status == 200:
                resolved = ResolvedRelease(request.version, PublishedVersion(slug, slug), how)
                return PublishedDocs("readthedocs", root, slug, resolved)
            tried.append(f"{url} (HTTP {status})")
    raise _nothing_found(request, tried, layout="Read the Docs")


def _with_path(url: str, parts: list[str]) -> str:
    split = urlsplit(url)
    return f"{split.scheme}://{split.netloc}/" + "".join(f"{part}/" for part in parts)


def _fallback_ok(found: ResolvedRelease | None, request: SiteRequest, slug: str = "") -> bool:
    """``stable`` stands in for a release Read the Docs does not publish by itself (it is
    the newest release); ``latest`` (the development branch) only with ``--fallback latest``."""
    name = found.version if found is not None else slug
    return name.lower() != "latest" or request.fallback_latest


def _addons_versions(
    site: str, project: str, current: str, http: Fetcher, tried: list[str]
) -> list[str] | None:
    """The project's active version slugs from Read the Docs' addons API (on every RTD
    domain, custom ones too, under ``/_/``); None when it does not answer."""
    parts = urlsplit(site)
    url = (
        f"{parts.scheme}://{parts.netloc}/_/addons/?api-version=1&client-version=1.0.0"
        f"&project-slug={quote(project)}&version-slug={quote(current or 'latest')}"
    )
    try:
        answer = http.probe(url, 4 * 1024 * 1024)
        data = json.loads(answer.body) if answer.status == 200 else None
    except (DownloadError, ValueError) as error:
        tried.append(f"{url} ({error})")
        return None
    active = data.get("versions", {}).get("active") if isinstance(data, dict) else None
    if not isinstance(active, list):
        tried.append(f"{url} (HTTP {answer.status}, no version list)")
        return None
    return [str(v["slug"]) for v in active if isinstance(v, dict) and v.get("slug")]


def _rtd_signals(page: Probe) -> bool:
    return _is_rtd_host(page.url) or "x-rtd-project" in page.headers or bool(_rtd_slugs(page)[0])


def _rtd_slugs(page: Probe) -> tuple[str, str]:
    """(project slug, version slug) a Read the Docs page names, by header or meta tag."""
    found = {kind.decode().lower(): value.decode() for kind, value in _RTD_META.findall(page.body)}
    project = page.headers.get("x-rtd-project") or found.get("project", "")
    version = page.headers.get("x-rtd-version") or found.get("version", "")
    return project.strip(), version.strip()


def _is_rtd_host(url: str) -> bool:
    return (urlsplit(url).hostname or "").endswith(_RTD_HOSTS)


def _unversioned(request: SiteRequest, layout: str = "unversioned") -> PublishedDocs:
    entry = PublishedVersion(request.version, request.version)
    resolved = ResolvedRelease(request.version, entry, "unversioned")
    return PublishedDocs(layout, request.site, "", resolved)


def _nothing_found(
    request: SiteRequest, tried: list[str], layout: str = ""
) -> ReleaseNotFoundError:
    where = {"metadata": "its package metadata", "default": "a guess, with no docs link"}
    found = where.get(request.site_source, "--site-url")
    what = f"no {layout} docs" if layout else "no docs site"
    return ReleaseNotFoundError(
        f"{what} found for release {request.version} at {request.site} (from {found}); "
        f"tried: {'; '.join(tried) or 'nothing'}. Pass --site-url URL (the published docs' "
        "root), --version SEGMENT ('' for a site without one) or --versions-url URL"
        + (", or --fallback latest" if layout else "")
    )


def _read_cache(cache: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads((cache / _CACHE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(cache: Path, key: str, found: PublishedDocs) -> None:
    known = _read_cache(cache)
    known[key] = {"layout": found.layout, "site_url": found.site_url, "version": found.version,
                  "how": found.resolved.how}  # fmt: skip
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".{_CACHE}.tmp"
    tmp.write_text(json.dumps(known, indent=1), encoding="utf-8")
    tmp.replace(cache / _CACHE)


def _from_cache(entry: dict[str, str], request: SiteRequest) -> PublishedDocs:
    version = str(entry.get("version", ""))
    published = PublishedVersion(version or request.version, version or request.version)
    resolved = ResolvedRelease(request.version, published, str(entry.get("how", "exact")))
    return PublishedDocs(str(entry["layout"]), str(entry["site_url"]), version, resolved)
