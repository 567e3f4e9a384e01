"""The docs of an installed package: its version, repository and docs site, as a release.

The version is the installed distribution's (``importlib.metadata``, or another Python's when
``--python`` names one); the repository and docs site come from its ``Project-URL``s
(``Source``/``Repository``/``Homepage`` on GitHub; ``Documentation``). The result is a
:class:`~citewise.sources.release.ReleaseSpec`, indexed exactly as ``--release`` is.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from citewise.errors import ConfigurationError, SourceError
from citewise.sources.release import ReleaseSpec

__all__ = [
    "InstalledPackage",
    "installed_package",
    "package_release_spec",
    "pinned_requirements",
]

_GITHUB_RE = re.compile(
    r"^https?://(?:www\.)?github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?(?:[#?].*)?$"
)
_GITHUB_PAGES_RE = re.compile(r"^https?://([\w-]+)\.github\.io/([\w.-]+)")
_PIN_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*===?\s*([^\s;#,]+)")
_DOCS_LABELS = ("documentation", "docs", "doc")
_REPO_LABELS = ("source", "source code", "repository", "code", "github", "homepage", "home")
# Run by ``--python PATH``: that interpreter's view of the distribution, as JSON.
_PROBE = """
import json, sys
from importlib import metadata
try:
    dist = metadata.distribution(sys.argv[1])
except metadata.PackageNotFoundError:
    print(json.dumps(None))
else:
    meta = dist.metadata
    print(json.dumps({"name": meta["Name"], "version": dist.version,
                      "urls": meta.get_all("Project-URL") or [],
                      "home_page": meta.get("Home-page") or ""}))
"""


@dataclass(frozen=True)
class InstalledPackage:
    """An installed distribution: its version and the links its metadata declares."""

    name: str
    version: str
    urls: tuple[tuple[str, str], ...]  # (label, URL) from Project-URL, then Home-page
    python: str = ""  # the interpreter asked ("" for this one)

    @property
    def repository(self) -> tuple[str, str] | None:
        """(owner, repo) of its GitHub repository, source links first."""
        for _, url in self._ranked(_REPO_LABELS):
            match = _GITHUB_RE.match(url.strip())
            if match:
                return match.group(1), match.group(2)
        return None

    @property
    def docs_url(self) -> str | None:
        """Its documentation site, from a ``Documentation`` link."""
        for label, url in self.urls:
            if label.lower() in _DOCS_LABELS and urlsplit(url).scheme in ("http", "https"):
                return url.strip()
        return None

    def _ranked(self, labels: tuple[str, ...]) -> list[tuple[str, str]]:
        def rank(item: tuple[str, str]) -> int:
            label = item[0].lower()
            return labels.index(label) if label in labels else len(labels)

        return sorted(self.urls, key=rank)


def installed_package(name: str, python: str | None = None) -> InstalledPackage:
    """The installed distribution ``name``, in this Python or the interpreter ``python``.

    Raises:
        SourceError: it is not installed there, or that interpreter cannot be run.
    """
    if python:
        data = _probe(name, python)
    else:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            data = None
        else:
            meta = dist.metadata
            data = {
                "name": meta["Name"],
                "version": dist.version,
                "urls": meta.get_all("Project-URL") or [],
                "home_page": (meta.get_all("Home-page") or [""])[0],
            }
    if data is None:
        where = python or "this Python"
        raise SourceError(
            f"package {name!r} is not installed in {where}: install it, name the Python it is "
            "installed in with --python PATH, or give --release OWNER/REPO@VERSION"
        )
    urls = []
    for entry in data.get("urls", []):
        label, _, url = str(entry).partition(",")
        urls.append((label.strip(), url.strip()))
    if data.get("home_page"):
        urls.append(("Homepage", str(data["home_page"]).strip()))
    return InstalledPackage(str(data["name"]), str(data["version"]), tuple(urls), python or "")


def _probe(name: str, python: str) -> Any:
    try:
        done = subprocess.run(  # noqa: S603  (the interpreter the user named)
            [python, "-c", _PROBE, name], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SourceError(f"cannot run --python {python}: {error}") from None
    if done.returncode != 0:
        tail = " ".join(done.stderr.split()[-30:])
        raise SourceError(f"--python {python} failed (exit {done.returncode}): {tail}")
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        raise SourceError(f"--python {python} printed no package metadata") from None


def package_release_spec(package: InstalledPackage, **options: Any) -> ReleaseSpec:
    """The release of the installed version, found from the package's links.

    ``options`` are :class:`ReleaseSpec`'s (``site_url``, ``archive_url``…); a given
    ``site_url`` is used as is. A Read the Docs site has no versions.json: its pages are
    under ``/en/v{version}/`` (the tag's name). A ``github.io`` site is a mike site with
    versions.json, and so is the default ``https://{owner}.github.io/{repo}/``.

    Raises:
        ConfigurationError: no GitHub repository among the links (the message lists them
            and how to pass the release instead).
    """
    repository = package.repository
    docs = package.docs_url
    if repository is None and docs and (pages := _GITHUB_PAGES_RE.match(docs)):
        repository = (pages.group(1), pages.group(2))
    if repository is None:
        shown = ", ".join(f"{label}: {url}" for label, url in package.urls) or "none"
        raise ConfigurationError(
            f"{package.name} {package.version}: no GitHub repository among its Project-URLs "
            f"(looked for Source, Repository, Homepage on github.com; found {shown}); pass "
            f"--release OWNER/REPO@{package.version}, with --site-url for its docs site"
        )
    owner, repo = repository
    site = options.pop("site_url", None)
    if site is None and docs and (_is_read_the_docs(docs) or _GITHUB_PAGES_RE.match(docs)):
        site = f"{docs.rstrip('/')}/en/v{package.version}/" if _is_read_the_docs(docs) else docs
    versioned = site is None or not _is_read_the_docs(site)
    return ReleaseSpec(owner, repo, package.version, site_url=site, versioned_site=versioned,
                       **options)  # fmt: skip


def _is_read_the_docs(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host.endswith((".readthedocs.io", ".readthedocs.org"))


def pinned_requirements(path: Path) -> list[tuple[str, str]]:
    """The ``name==version`` pins of a requirements file, in order.

    Options (``-r``, ``--index-url``), comments and environment markers are ignored.

    Raises:
        SourceError: the file cannot be read, a line is a requirement that is not pinned
            (the message names it), or it pins nothing.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SourceError(f"cannot read {path}: {error}") from None
    pins: list[tuple[str, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        match = _PIN_RE.match(line)
        if match is None:
            raise SourceError(f"{path}:{number}: {line!r} is not pinned (use name==version)")
        pins.append((match.group(1), match.group(2)))
    if not pins:
        raise SourceError(f"{path}: no pinned requirements (name==version)")
    return pins
