"""`citewise index --package`: the docs of the installed version, found from its metadata."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

from citewise.errors import ConfigurationError, SourceError
from citewise.sources.package import (
    InstalledPackage,
    installed_package,
    marker_environment,
    package_release_spec,
    read_requirements,
    release_spec,
)

from ..conftest import SHARED_DATA, require
from .conftest import LocalSite, folder_members, tar_gz, versions_json, widget_archive

REQUESTS = SHARED_DATA / "requests-2.34.2"
ARCHIVE_PATH = "/{owner}/{repo}/archive/refs/tags/v{version}.tar.gz"
SITE = "https://requests.readthedocs.io/en/v2.34.2/"


def run_cli(*argv: str) -> tuple[int, str, str]:
    from citewise.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def dist_info(root: Path, name: str, version: str, *urls: str) -> Path:
    """An installed distribution's metadata, as pip writes it, under ``root``."""
    folder = root / f"{name}-{version}.dist-info"
    folder.mkdir(parents=True)
    lines = ["Metadata-Version: 2.4", f"Name: {name}", f"Version: {version}"]
    lines += [f"Project-URL: {url}" for url in urls]
    (folder / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_this_pythons_installed_version() -> None:
    found = installed_package("pyyaml")
    assert found.version == metadata.version("pyyaml")
    assert found.name.lower() == "pyyaml"


def test_another_python_is_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = dist_info(tmp_path, "widgets", "1.4.2", "Source, https://github.com/acme/widgets",
                     "Documentation, https://widgets.readthedocs.io")  # fmt: skip
    monkeypatch.setenv("PYTHONPATH", str(site))
    found = installed_package("widgets", sys.executable)
    assert (found.version, found.repository) == ("1.4.2", ("acme", "widgets"))
    assert found.docs_url == "https://widgets.readthedocs.io"
    spec = package_release_spec(found)
    # The site is the docs link; its version segment is found from the site when fetched.
    assert (spec.name, spec.version, spec.site) == (
        "acme/widgets", "1.4.2", "https://widgets.readthedocs.io/"
    )  # fmt: skip
    assert (spec.site_source, spec.layout, spec.docs_version) == ("metadata", "auto", None)
    # Its dependencies are installed where it is: the API reference reads bases there.
    assert Path(found.location).resolve() == site.resolve()
    assert spec.api_dependencies == (Path(found.location),)
    given = package_release_spec(found, api_dependencies=())
    assert given.api_dependencies == ()


def test_one_reader_makes_a_spec_from_a_release_or_a_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The CLI, the server and its environment all come through here: None is "not given".
    named = release_spec("acme/widgets@1.4.2", site_url=None, versions_url=None)
    assert (named.name, named.version, named.site_url) == ("acme/widgets", "1.4.2", None)
    site = dist_info(tmp_path, "widgets", "2.0.1", "Source, https://github.com/acme/widgets")
    monkeypatch.setenv("PYTHONPATH", str(site))
    installed = release_spec(package="widgets", python=sys.executable, site_url=None)
    assert (installed.name, installed.version) == ("acme/widgets", "2.0.1")
    given = release_spec(package="widgets", python=sys.executable,
                         site_url="https://docs.acme.test/widgets/")  # fmt: skip
    assert given.site == "https://docs.acme.test/widgets/"
    for wrong in ({}, {"release": "acme/widgets@1", "package": "widgets"}):
        with pytest.raises(ConfigurationError, match="name one release"):
            release_spec(**wrong)
    with pytest.raises(ConfigurationError, match="OWNER/REPO@VERSION"):
        release_spec("widgets")


def test_this_pythons_package_is_located_in_its_site_packages() -> None:
    found = installed_package("pyyaml")
    assert (Path(found.location) / "yaml" / "__init__.py").is_file()


def test_a_missing_package_names_the_ways_out(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not installed in this Python.*--python PATH.*--release"):
        installed_package("surely-not-installed-citewise-test")
    with pytest.raises(SourceError, match="cannot run --python"):
        installed_package("widgets", str(tmp_path / "no-python"))


def test_no_repository_link_says_what_was_looked_for() -> None:
    package = InstalledPackage("widgets", "1.0", (("Homepage", "https://widgets.example"),))
    with pytest.raises(ConfigurationError) as caught:
        package_release_spec(package)
    message = str(caught.value)
    assert "Source, Repository, Homepage on github.com" in message
    assert "Homepage: https://widgets.example" in message
    assert "--release OWNER/REPO@1.0" in message and "--site-url" in message


def test_mike_sites_keep_versions_json() -> None:
    package = InstalledPackage("lgos", "0.12.0", (
        ("Repository", "https://github.com/ilkersigirci/langgraph-openai-serve.git"),
        ("Documentation", "https://ilkersigirci.github.io/langgraph-openai-serve/"),
    ))  # fmt: skip
    spec = package_release_spec(package)
    assert spec.name == "ilkersigirci/langgraph-openai-serve"
    assert spec.site == "https://ilkersigirci.github.io/langgraph-openai-serve/"
    given = package_release_spec(package, site_url="https://docs.example/lgos/")
    assert given.site == "https://docs.example/lgos/" and given.site_source == "given"


def test_the_docs_site_is_the_docs_link_else_a_homepage_that_is_no_code_host() -> None:
    def docs(*urls: tuple[str, str]) -> str | None:
        return InstalledPackage("p", "1.0", urls).docs_url

    source = ("Source", "https://github.com/pypa/packaging")
    assert docs(source, ("Documentation", "https://packaging.pypa.io/")) == (
        "https://packaging.pypa.io/"
    )
    assert docs(("Homepage", "https://www.starlette.io/"), source) == "https://www.starlette.io/"
    assert docs(("Home-page", "https://github.com/acme/w"), source) is None
    # Labels are compared as PEP 753 normalizes them.
    assert docs(("Docs:", "https://w.example/")) == "https://w.example/"


# -- requests 2.34.2, served as a tag archive and indexed through the CLI ---------------------


@dataclass
class IndexedPackage:
    home: Path
    out: str
    err: str
    site: LocalSite


@pytest.fixture(scope="module")
def requests_package(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexedPackage]:
    root = require(REQUESTS)
    top = "requests-2.34.2/"
    members = folder_members(root / "docs", top + "docs/")
    members.update(folder_members(root / "src", top + "src/"))
    members[top + "pyproject.toml"] = (root / "pyproject.toml").read_bytes()
    site = LocalSite()
    site.files["/psf/requests/archive/refs/tags/v2.34.2.tar.gz"] = tar_gz(members)
    # The installed distribution, as pip leaves it (its links are the real ones).
    installed = dist_info(tmp_path_factory.mktemp("site-packages"), "requests", "2.34.2",
                          "Documentation, https://requests.readthedocs.io",
                          "Source, https://github.com/psf/requests")  # fmt: skip
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEWISE_HOME", str(home))
        patch.setenv("PYTHONPATH", str(installed))
        code, out, err = run_cli(
            "index", "--package", "requests", "--python", sys.executable,
            "--archive-url", site.base + ARCHIVE_PATH, "-q",
            # Its Read the Docs version root, given as is (no request to the real site).
            "--site-url", SITE, "--version", "",
            # Read the Docs builds requests with dirhtml by a project setting, not its source.
            "--page-form", "dirhtml",
        )  # fmt: skip
    assert code == 0, err
    yield IndexedPackage(home, out, err, site)
    site.stop()


def search(package: IndexedPackage, query: str) -> list[dict[str, str]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEWISE_HOME", str(package.home))
        code, out, err = run_cli("search", query, "--kb", "requests-2.34.2", "--json")
    assert code == 0, err
    hits: list[dict[str, str]] = json.loads(out)
    return hits


def test_package_indexes_prose_and_api_of_the_installed_release(
    requests_package: IndexedPackage,
) -> None:
    assert "requests 2.34.2 installed: psf/requests" in requests_package.err
    assert requests_package.site.requests == ["/psf/requests/archive/refs/tags/v2.34.2.tar.gz"]
    summary = requests_package.out.splitlines()[0]
    assert summary.startswith("requests-2.34.2: 15 files (15 added")
    # Nothing is skipped silently: every other file of the docs folder is named.
    assert "skipped conf.py: no parser for .py" in requests_package.out
    assert f"release 2.34.2, cited at {SITE}" in requests_package.out


def test_search_cites_the_api_reference_entry(requests_package: IndexedPackage) -> None:
    hits = search(requests_package, "Session.mount prefix matching")
    assert hits[0]["url"] == f"{SITE}api/#requests.Session.mount"
    prose = search(requests_package, "How do I make a request and read the response?")
    assert any(hit["url"].startswith(f"{SITE}user/quickstart/") for hit in prose)


# -- --requirements: one knowledge base per pinned package -----------------------------------


def test_requirement_lines_are_read_with_the_packaging_grammar(tmp_path: Path) -> None:
    (tmp_path / "base.txt").write_text("gizmos == 3.1  # from the base file\n")
    path = tmp_path / "requirements.txt"
    path.write_text(
        "# app\n"
        "-r base.txt\n"
        "--index-url https://mirror.example/simple\n"
        "widgets[extra]==1.4.2  # pinned\n"
        "Gadgets===2.0 ; python_version > '3'\n"
        "legacy==0.9 ; python_version < '3'\n"
        "loose>=1.0\n"
        "starred==1.*\n"
        "direct @ https://example.org/direct-1.0.tar.gz\n"
        "-e ./local-checkout\n"
        "long-name==\\\n"
        "    5.0\n"
        "WIDGETS==9.9\n"
    )
    found = read_requirements(path)
    assert found.pins == (
        ("gizmos", "3.1"), ("widgets", "1.4.2"), ("Gadgets", "2.0"), ("long-name", "5.0")
    )  # fmt: skip
    reasons = dict(found.skipped)
    assert reasons == {
        "requirements.txt:6: legacy==0.9 ; python_version < '3'":
            "its marker (python_version < \"3\") is false for this Python",
        "requirements.txt:7: loose>=1.0": "not pinned (>=1.0): use loose==VERSION",
        "requirements.txt:8: starred==1.*": "not pinned (==1.*): use starred==VERSION",
        "requirements.txt:9: direct @ https://example.org/direct-1.0.tar.gz":
            "a direct URL reference, not a published release",
        "requirements.txt:10: -e ./local-checkout": "an editable install, not a published release",
        "requirements.txt:13: WIDGETS==9.9": "WIDGETS is already pinned to 1.4.2",
    }  # fmt: skip
    path.write_text("widgets>=1.0\n")
    with pytest.raises(SourceError, match=r"no pinned requirements.*widgets>=1.0: not pinned"):
        read_requirements(path)


def test_requirements_index_each_pin_and_name_the_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = LocalSite()
    try:
        site.files["/versions.json"] = versions_json(("1.4.2", []))
        site.files["/acme/widgets/archive/refs/tags/v1.4.2.tar.gz"] = widget_archive("1.4.2")
        packages = dist_info(tmp_path / "sp", "widgets", "1.0.0",
                             "Source, https://github.com/acme/widgets")  # fmt: skip
        dist_info(packages, "orphan", "0.1", "Homepage, https://orphan.example")
        requirements = tmp_path / "requirements.txt"
        requirements.write_text("widgets==1.4.2\norphan==0.1\nloose>=2\n")
        monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("PYTHONPATH", str(packages))
        code, out, err = run_cli(
            "index", "--requirements", str(requirements), "--python", sys.executable,
            "--versions-url", site.url("/versions.json"),
            "--archive-url", site.base + ARCHIVE_PATH, "-q",
        )  # fmt: skip
    finally:
        site.stop()
    assert code == 1  # one pin could not be indexed
    # The pinned version is indexed, not the installed one.
    assert out.splitlines()[0].startswith("widgets-1.4.2: 5 files (5 added")
    assert "orphan==0.1: not indexed:" in err and "--release OWNER/REPO@0.1" in err
    assert "requirements.txt:3: loose>=2: skipped: not pinned (>=2)" in err


def test_markers_are_evaluated_for_the_python_named(tmp_path: Path) -> None:
    environment = marker_environment(sys.executable)
    assert environment["python_version"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    path = tmp_path / "requirements.txt"
    path.write_text("new==1.0 ; python_version >= '3.8'\nold==1.0 ; python_version < '3.8'\n")
    older = {**environment, "python_version": "3.7", "python_full_version": "3.7.9"}
    assert read_requirements(path, older).pins == (("old", "1.0"),)
    assert read_requirements(path, environment).pins == (("new", "1.0"),)
    assert dict(read_requirements(path, older).skipped) == {
        "requirements.txt:1: new==1.0 ; python_version >= '3.8'":
            'its marker (python_version >= "3.8") is false for that Python'
    }  # fmt: skip
