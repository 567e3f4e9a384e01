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
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from citewise.errors import ConfigurationError, SourceError
from citewise.sources.release import ReleaseSpec

__all__ = [
    "InstalledPackage",
    "Requirements",
    "installed_package",
    "marker_environment",
    "package_release_spec",
    "read_requirements",
    "release_spec",
]

_GITHUB_RE = re.compile(
    r"^https?://(?:www\.)?github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?(?:[#?].*)?$"
)
# Options pip takes after a requirement (hash-checking mode and build settings).
_PER_REQUIREMENT_OPTIONS = re.compile(
    r"\s+--(?:hash|config-settings|global-option|install-option)(?:=|\s+)\S+"
)
_GITHUB_PAGES_RE = re.compile(r"^https?://([\w-]+)\.github\.io/([\w.-]+)")
_COMMENT_RE = re.compile(r"(^|\s+)#.*$")
# Project-URL labels, normalized as PEP 753 does (lowercase, no punctuation or spaces).
_DOCS_LABELS = ("documentation", "docs", "doc")
_REPO_LABELS = ("source", "sourcecode", "repository", "code", "github", "homepage", "home")
_HOME_LABELS = ("homepage", "home")
# Hosts whose pages are a repository or an index entry, not a docs site.
_NOT_DOCS_HOSTS = ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "pypi.org")
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
                      "home_page": meta.get("Home-page") or "",
                      "location": str(dist.locate_file(""))}))
"""


# The marker environment as packaging computes it, with the standard library only (the other
# Python may not have packaging).
_MARKERS_PROBE = """
import json, os, platform, sys
info = sys.implementation.version
version = f"{info.major}.{info.minor}.{info.micro}"
if info.releaselevel != "final":
    version += info.releaselevel[0] + str(info.serial)
print(json.dumps({
    "implementation_name": sys.implementation.name, "implementation_version": version,
    "os_name": os.name, "platform_machine": platform.machine(),
    "platform_release": platform.release(), "platform_system": platform.system(),
    "platform_version": platform.version(), "python_full_version": platform.python_version(),
    "platform_python_implementation": platform.python_implementation(),
    "python_version": ".".join(platform.python_version_tuple()[:2]),
    "sys_platform": sys.platform,
}))
"""


@dataclass(frozen=True)
class InstalledPackage:
    """An installed distribution: its version and the links its metadata declares."""

    name: str
    version: str
    urls: tuple[tuple[str, str], ...]  # (label, URL) from Project-URL, then Home-page
    python: str = ""  # the interpreter asked ("" for this one)
    # The folder it is installed in (a site-packages, its dependencies usually beside it).
    location: str = ""

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
        """Its documentation site: a ``Documentation``/``Docs`` link, else a ``Homepage``
        that is not a code host or a package index."""
        for labels in (_DOCS_LABELS, _HOME_LABELS):
            for label, url in self.urls:
                parts = urlsplit(url.strip())
                host = (parts.hostname or "").removeprefix("www.")
                if _label(label) not in labels or parts.scheme not in ("http", "https"):
                    continue
                if labels is _DOCS_LABELS or host not in _NOT_DOCS_HOSTS:
                    return url.strip()
        return None

    def _ranked(self, labels: tuple[str, ...]) -> list[tuple[str, str]]:
        def rank(item: tuple[str, str]) -> int:
            label = _label(item[0])
            return labels.index(label) if label in labels else len(labels)

        return sorted(self.urls, key=rank)


def _label(label: str) -> str:
    return re.sub(r"[^a-z0-9]", "", label.lower())


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
            data = distribution_data(dist)
    if data is None:
        where = python or "this Python"
        raise SourceError(
            f"package {name!r} is not installed in {where}: install it, name the Python it is "
            "installed in with --python PATH, or give --release OWNER/REPO@VERSION"
        )
    return package_from_data(data, python or "")


def distribution_data(dist: metadata.Distribution) -> dict[str, Any]:
    """What the probes print for a distribution, read in this process."""
    meta = dist.metadata
    return {
        "name": meta["Name"],
        "version": dist.version,
        "urls": meta.get_all("Project-URL") or [],
        "home_page": (meta.get_all("Home-page") or [""])[0],
        "location": str(dist.locate_file("")),
    }


def package_from_data(data: Mapping[str, Any], python: str) -> InstalledPackage:
    """An :class:`InstalledPackage` from what a probe printed (``python`` "" for this one)."""
    urls = []
    for entry in data.get("urls", []):
        label, _, url = str(entry).partition(",")
        urls.append((label.strip(), url.strip()))
    if data.get("home_page"):
        urls.append(("Homepage", str(data["home_page"]).strip()))
    return InstalledPackage(
        str(data["name"]), str(data["version"]), tuple(urls), python,
        location=str(data.get("location") or ""),
    )  # fmt: skip


def marker_environment(python: str) -> dict[str, str]:
    """The environment markers of the interpreter ``python`` (``python_version``,
    ``sys_platform``…), for evaluating a requirements file as it would be installed there.

    Raises:
        SourceError: that interpreter cannot be run.
    """
    found = _run(python, _MARKERS_PROBE)
    if not isinstance(found, dict):
        raise SourceError(f"--python {python} printed no environment markers")
    return {str(key): str(value) for key, value in found.items()}


def _probe(name: str, python: str) -> Any:
    return _run(python, _PROBE, name)


def _run(python: str, script: str, *argv: str) -> Any:
    try:
        done = subprocess.run(  # noqa: S603  (the interpreter the user named)
            [python, "-c", script, *argv], capture_output=True, text=True, timeout=60, check=False
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


def release_spec(
    release: str | None = None, *, package: str | None = None, python: str | None = None,
    **options: Any,
) -> ReleaseSpec:  # fmt: skip
    """The release a user named, however they named it: ``OWNER/REPO@VERSION``, or the
    installed version of ``package`` (in this Python, or the interpreter ``python``). The one
    place a door's words become a :class:`ReleaseSpec`, so the CLI, the server and its
    environment variables read them alike.

    ``options`` are ReleaseSpec's; a None value is "not given" (the spec's default).

    Raises:
        ConfigurationError: neither or both named, or the release is not OWNER/REPO@VERSION.
        SourceError: the package is not installed there.
    """
    given = {name: value for name, value in options.items() if value is not None}
    if (release is None) == (package is None):
        raise ConfigurationError("name one release: OWNER/REPO@VERSION or an installed package")
    if release is not None:
        return ReleaseSpec.parse(release, **given)
    assert package is not None
    return package_release_spec(installed_package(package, python), **given)


def package_release_spec(package: InstalledPackage, **options: Any) -> ReleaseSpec:
    """The release of the installed version, found from the package's links.

    ``options`` are :class:`ReleaseSpec`'s (``site_url``, ``archive_url``…); a given
    ``site_url`` is used as is. Otherwise the package's docs link (``Documentation``, else a
    ``Homepage`` that is not a code host) is the site, and how it publishes versions (mike's
    versions.json, Read the Docs, none) is found from the site itself when it is fetched.

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
    options.setdefault("site_hint", docs)
    # Its dependencies are installed beside it: Sphinx's build imports them for inherited
    # members, so the API reference reads their source there.
    if package.location and Path(package.location).is_dir():
        options.setdefault("api_dependencies", (Path(package.location),))
    return ReleaseSpec(owner, repo, package.version, **options)


@dataclass(frozen=True)
class Requirements:
    """A requirements file read: its ``name==version`` pins, and the lines skipped and why."""

    pins: tuple[tuple[str, str], ...]
    skipped: tuple[tuple[str, str], ...]  # ("FILE:LINE: text", reason)


def read_requirements(path: Path, environment: Mapping[str, str] | None = None) -> Requirements:
    """The pins of a requirements file, with ``packaging``'s requirement grammar.

    A requirement with one ``==``/``===`` version (extras allowed) is a pin; its environment
    marker is evaluated for this Python (or ``environment``, another one's from
    :func:`marker_environment`), a false one skips it. Comments, blank lines and
    options (``--index-url``…) are ignored; ``-r``/``--requirement FILE`` is read in place.
    Unpinned requirements, direct URLs, editables (``-e``), constraints and repeats are
    skipped, each with its reason.

    A lock file (``uv.lock``, ``poetry.lock``, ``pylock.toml``) gives every package it locks
    from an index (:mod:`citewise.sources.lockfiles`); ``--hash`` options are read past.

    Raises:
        SourceError: a file cannot be read, or nothing in it is pinned.
    """
    from citewise.sources.lockfiles import is_lock_file, read_lock

    pins: dict[str, tuple[str, str]] = {}
    skipped: list[tuple[str, str]] = []
    if is_lock_file(path):
        locked, skipped = read_lock(path)
        pins = {canonicalize_name(name): (name, version) for name, version in locked}
    else:
        _read_into(path, pins, skipped, seen=set(), environment=environment)
    if not pins:
        reasons = "; ".join(f"{where}: {why}" for where, why in skipped[:5])
        raise SourceError(f"{path}: no pinned requirements (name==version)" +
                          (f": {reasons}" if reasons else ""))  # fmt: skip
    return Requirements(tuple(pins.values()), tuple(skipped))


def _read_into(
    path: Path,
    pins: dict[str, tuple[str, str]],
    skipped: list[tuple[str, str]],
    seen: set[Path],
    environment: Mapping[str, str] | None,
) -> None:
    resolved = path.resolve()
    if resolved in seen:
        return
    seen.add(resolved)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SourceError(f"cannot read {path}: {error}") from None
    for number, line in _logical_lines(text):
        where = f"{path.name}:{number}: {line}"
        if line.startswith("-"):
            option, _, value = line.partition(" ") if " " in line else line.partition("=")
            if option in ("-r", "--requirement") and value.strip():
                _read_into(path.parent / value.strip(), pins, skipped, seen, environment)
            elif option in ("-e", "--editable"):
                skipped.append((where, "an editable install, not a published release"))
            elif option in ("-c", "--constraint"):
                skipped.append((where, "constraints are not read (list the pins themselves)"))
            continue
        reason, pin = _pin(_PER_REQUIREMENT_OPTIONS.sub("", line), environment)
        if pin is None:
            skipped.append((where, reason))
            continue
        key = canonicalize_name(pin[0])
        if key in pins:
            skipped.append((where, f"{pin[0]} is already pinned to {pins[key][1]}"))
            continue
        pins[key] = pin


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each line, comments cut and ``\\`` continuations joined."""
    lines: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _COMMENT_RE.sub("", raw)
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        joined = (pending + line).strip()
        pending = ""
        if joined:
            lines.append((start, joined))
    if pending.strip():
        lines.append((start, pending.strip()))
    return lines


def _pin(line: str, environment: Mapping[str, str] | None) -> tuple[str, tuple[str, str] | None]:
    """(why not, None) or ("", (name, version)) for one requirement line."""
    try:
        requirement = Requirement(line)
    except InvalidRequirement as error:
        return f"not a requirement ({str(error).splitlines()[0]})", None
    if requirement.marker is not None and not requirement.marker.evaluate(
        dict(environment) if environment is not None else None
    ):
        where = "that Python" if environment is not None else "this Python"
        return f"its marker ({requirement.marker}) is false for {where}", None
    if requirement.url:
        return "a direct URL reference, not a published release", None
    exact = [s for s in requirement.specifier if s.operator in ("==", "===")]
    if len(exact) != 1 or exact[0].version.endswith(".*"):
        shown = str(requirement.specifier) or "no version"
        return f"not pinned ({shown}): use {requirement.name}==VERSION", None
    return "", (requirement.name, exact[0].version)
