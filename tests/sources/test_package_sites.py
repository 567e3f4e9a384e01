"""`citewise index --package NAME` end to end, for the four kinds of docs site a library has.

Each library is a real installed distribution (a dist-info folder on the path of the Python
named by ``--python``) whose docs link points at a site served from 127.0.0.1, beside its tag
archive. The citations' URLs must be the published pages: site root, version segment, page.
"""

from __future__ import annotations

import json
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.errors import ReleaseNotFoundError
from citewise.kb import KnowledgeBase
from citewise.sources.release import ReleaseSpec, fetch_release

from .conftest import LocalSite, Member, link, tar_gz, versions_json, widget_archive
from .test_package import dist_info, run_cli

ARCHIVE_PATH = "/{owner}/{repo}/archive/refs/tags/v{version}.tar.gz"
RTD_PAGE = (
    b'<html><head><script async src="/_/static/javascript/readthedocs-addons.js"></script>'
    b'<meta name="readthedocs-project-slug" content="gadgets" />'
    b'<meta name="readthedocs-version-slug" content="stable" /></head><body>Gadgets</body></html>'
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, version: str,
            *urls: str) -> None:  # fmt: skip
    """``name`` installed at ``version`` with these Project-URLs, for ``--python``."""
    packages = tmp_path / "site-packages"
    for old in packages.glob(f"{name}-*.dist-info"):
        for file in old.iterdir():
            file.unlink()
        old.rmdir()
    dist_info(packages, name, version, *urls)
    monkeypatch.setenv("PYTHONPATH", str(packages))


def index_package(name: str, site: LocalSite, *options: str) -> tuple[int, str, str]:
    return run_cli(
        "index", "--package", name, "--python", sys.executable,
        "--archive-url", site.base + ARCHIVE_PATH, "-q", *options,
    )  # fmt: skip


def cite(kb: str, query: str) -> str:
    """The URL of the best hit for ``query`` in ``kb``."""
    code, out, err = run_cli("search", query, "--kb", kb, "--json")
    assert code == 0, err
    url: str = json.loads(out)[0]["url"]
    return url


def sphinx_archive(top: str, builder: str) -> bytes:
    """A Sphinx project at its release tag, with a link inside the archive and one out of it."""
    members: dict[str, Member] = {
        top + ".readthedocs.yaml": (
            f"version: 2\nsphinx:\n  configuration: docs/conf.py\n  builder: {builder}\n"
        ).encode(),
        top + "logo.svg": b"<svg/>",
        top + "docs/conf.py": b'project = "Gadgets"\nextensions = []\n',
        top + "docs/index.rst": b"Gadgets\n=======\n\n.. toctree::\n\n   usage\n",
        top + "docs/usage.rst": (
            b"Usage\n=====\n\nConnect a gadget with ``gadgets.connect()``.\n\n"
            b"Reply timeouts\n--------------\n\nA gadget waits ten seconds for a reply, then "
            b"gives up and raises GadgetTimeout.\n"
        ),
        top + "docs/logo.svg": link(tarfile.SYMTYPE, "../logo.svg"),
        top + "docs/hosts.txt": link(tarfile.SYMTYPE, "/etc/hosts"),
    }
    return tar_gz(members)


@pytest.fixture
def site() -> Iterator[LocalSite]:
    server = LocalSite()
    yield server
    server.stop()


# -- 1. MkDocs with mike: versions.json at the site root ------------------------------------


def test_mkdocs_versioned_site_is_cited_under_its_mike_version(
    site: LocalSite, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.files["/versions.json"] = versions_json(("1.4.2", ["latest"]), ("1.4.1", []))
    site.files["/acme/widgets/archive/refs/tags/v1.4.2.tar.gz"] = widget_archive("1.4.2")
    install(tmp_path, monkeypatch, "widgets", "1.4.2", "Source, https://github.com/acme/widgets",
            f"Documentation, {site.base}/")  # fmt: skip
    code, out, err = index_package("widgets", site)
    assert code == 0, err
    assert site.requests == ["/versions.json", "/acme/widgets/archive/refs/tags/v1.4.2.tar.gz"]
    assert f"release 1.4.2, cited at {site.base}/1.4.2/" in out
    assert cite("widgets-1.4.2", "pip install widgets") == f"{site.base}/1.4.2/guide/install/"
    meta = KnowledgeBase("widgets-1.4.2", settings=Settings(home=home)).meta()
    assert (meta["release_layout"], meta["release_docs_version"]) == ("mike", "1.4.2")
    # A second run asks the site nothing.
    code, out, err = index_package("widgets", site)
    assert code == 0, err
    assert len(site.requests) == 2 and "5 unchanged" in out


# -- 2. MkDocs without mike: the site root is the current release's docs --------------------


def test_mkdocs_unversioned_site_is_cited_without_a_version_segment(
    site: LocalSite, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.files["/widgets/"] = b"<html><head><title>Widgets</title></head><body></body></html>"
    site.files["/acme/widgets/archive/refs/tags/v0.47.3.tar.gz"] = widget_archive("0.47.3")
    install(tmp_path, monkeypatch, "widgets", "0.47.3", "Source, https://github.com/acme/widgets",
            f"Homepage, {site.base}/widgets/")  # fmt: skip
    code, out, err = index_package("widgets", site)
    assert code == 0, err
    assert site.requests == [
        "/widgets/versions.json",  # 404: not a mike site
        "/widgets/",  # reachable, and not Read the Docs: unversioned
        "/acme/widgets/archive/refs/tags/v0.47.3.tar.gz",
    ]
    assert cite("widgets-0.47.3", "caching proxy") == f"{site.base}/widgets/examples/cache/"
    code, out, err = index_package("widgets", site)
    assert code == 0, err
    assert len(site.requests) == 3  # the layout found is cached with the release


# -- 3. Sphinx `html` on Read the Docs, behind a custom domain ------------------------------


def test_sphinx_read_the_docs_site_on_a_custom_domain_is_cited_under_its_version_slug(
    site: LocalSite, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What Read the Docs serves on a custom domain: its headers and meta tags, / redirected
    # to the default version, and the addons API (under /_/) listing the active versions.
    site.headers.update({"X-RTD-Project": "gadgets", "X-RTD-Version-Method": "path"})
    site.redirects["/"] = "/en/stable/"
    site.files["/en/stable/"] = RTD_PAGE
    site.files["/_/addons/"] = json.dumps({"versions": {"active": [
        {"slug": "latest"}, {"slug": "stable"}, {"slug": "26.3"}, {"slug": "26.2"}
    ]}}).encode()  # fmt: skip
    site.files["/acme/gadgets/archive/refs/tags/v26.3.tar.gz"] = sphinx_archive(
        "gadgets-26.3/", "html"
    )
    install(tmp_path, monkeypatch, "gadgets", "26.3", "Source, https://github.com/acme/gadgets",
            f"Documentation, {site.base}/")  # fmt: skip
    code, out, err = index_package("gadgets", site)
    assert code == 0, err
    assert site.requests[:3] == ["/versions.json", "/", "/en/stable/"]
    assert site.requests[3].startswith("/_/addons/?api-version=1&")
    assert "project-slug=gadgets" in site.requests[3]
    assert site.requests[4:] == ["/acme/gadgets/archive/refs/tags/v26.3.tar.gz"]
    root = f"{site.base}/en/26.3/"
    assert f"cited at {root}" in out
    # The archive's links: one inside it materialised, one out of it skipped and reported.
    assert "skipped docs/hosts.txt (archive link): link to '/etc/hosts' points outside" in out
    url = cite("gadgets-26.3", "How long does a gadget wait for a reply?")
    assert url.startswith(root)  # the site base and the version slug
    # The page form, as the archive's .readthedocs.yaml names the builder: `html`.
    assert url == f"{root}usage.html#reply-timeouts"


# -- 4. Sphinx `dirhtml` on Read the Docs, published under its release line's branch ---------


def test_sphinx_dirhtml_site_is_cited_under_its_branch_slug(
    site: LocalSite, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No addons API answers here: each candidate slug's page is asked for in turn.
    site.headers["X-RTD-Project"] = "gadgets"
    site.redirects["/"] = "/en/stable/"
    site.files["/en/stable/"] = RTD_PAGE
    site.files["/en/8.5.x/"] = RTD_PAGE
    site.files["/acme/gadgets/archive/refs/tags/v8.5.0.tar.gz"] = sphinx_archive(
        "gadgets-8.5.0/", "dirhtml"
    )
    install(tmp_path, monkeypatch, "gadgets", "8.5.0", "Source, https://github.com/acme/gadgets",
            f"Documentation, {site.base}/")  # fmt: skip
    code, out, err = index_package("gadgets", site)
    assert code == 0, err
    probed = [path for path in site.requests if path.startswith("/en/")]
    assert probed == ["/en/stable/", "/en/8.5.0/", "/en/v8.5.0/", "/en/8.5.x/"]
    root = f"{site.base}/en/8.5.x/"
    assert "release 8.5.0 (for 8.5.0: the docs of its release line, 8.5.x)" in out
    url = cite("gadgets-8.5.0", "How long does a gadget wait for a reply?")
    assert url == f"{root}usage/#reply-timeouts"


# -- what the user gives is honoured and remembered ------------------------------------------


def test_an_empty_version_means_no_version_segment_and_asks_no_site(
    site: LocalSite, home: Path
) -> None:
    site.files["/widgets/widgets/archive/refs/tags/v1.0.0.tar.gz"] = widget_archive("1.0.0")
    code, out, err = run_cli(
        "index", "--release", "widgets/widgets@1.0.0", "--site-url", "https://widgets.example/",
        "--version", "", "--archive-url", site.base + ARCHIVE_PATH, "-q",
    )  # fmt: skip
    assert code == 0, err
    assert site.requests == ["/widgets/widgets/archive/refs/tags/v1.0.0.tar.gz"]
    assert cite("widgets-1.0.0", "pip install") == "https://widgets.example/guide/install/"


def test_a_given_site_without_versions_json_is_indexed_unversioned(
    site: LocalSite, home: Path
) -> None:
    site.files["/docs/"] = b"<html><body>Widgets</body></html>"
    site.files["/widgets/widgets/archive/refs/tags/v1.0.0.tar.gz"] = widget_archive("1.0.0")
    code, out, err = run_cli(
        "index", "--release", "widgets/widgets@1.0.0", "--site-url", site.url("/docs/"),
        "--archive-url", site.base + ARCHIVE_PATH, "-q",
    )  # fmt: skip
    assert code == 0, err
    assert cite("widgets-1.0.0", "pip install") == site.url("/docs/guide/install/")


def test_nothing_found_names_what_was_tried_and_the_flags_that_fix_it(
    site: LocalSite, settings: Settings
) -> None:
    spec = ReleaseSpec.parse("widgets/widgets@1.0.0", site_hint=site.url("/gone/"))
    with pytest.raises(ReleaseNotFoundError) as caught:
        fetch_release(spec, settings)
    message = str(caught.value)
    assert f"no docs site found for release 1.0.0 at {site.url('/gone/')}" in message
    assert "(from its package metadata)" in message
    assert f"{site.url('/gone/versions.json')} (HTTP 404)" in message
    assert f"{site.url('/gone/')} (HTTP 404)" in message
    assert (
        "--site-url URL" in message and "--version SEGMENT ('' for a site without one)" in message
    )


def test_requirements_reuse_the_site_a_knowledge_base_was_given(
    site: LocalSite, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.files["/versions.json"] = versions_json(("1.4.2", ["latest"]))
    site.files["/acme/widgets/archive/refs/tags/v1.4.2.tar.gz"] = widget_archive("1.4.2")
    install(tmp_path, monkeypatch, "widgets", "1.4.2", "Source, https://github.com/acme/widgets",
            f"Documentation, {site.base}/")  # fmt: skip
    code, _, err = index_package("widgets", site, "--site-url", "https://docs.example/w/",
                                 "--version", "")  # fmt: skip
    assert code == 0, err
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("widgets==1.4.2\n")
    code, out, err = run_cli("index", "--requirements", str(requirements),
                             "--python", sys.executable, "-q")  # fmt: skip
    assert code == 0, err
    # The docs link would say the mike site; the knowledge base keeps the site it was given.
    assert "/versions.json" not in site.requests
    assert "cited at https://docs.example/w/" in out
    assert cite("widgets-1.4.2", "pip install") == "https://docs.example/w/guide/install/"
    meta = KnowledgeBase("widgets-1.4.2", settings=Settings(home=home)).meta()
    assert json.loads(meta["release_choices"])["site_url"] == "https://docs.example/w/"


def test_a_site_found_anew_does_not_silently_rewrite_the_citations(
    site: LocalSite, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.files["/old/"] = b"<html><body>Widgets</body></html>"
    site.files["/new/versions.json"] = versions_json(("1.4.2", []))
    site.files["/acme/widgets/archive/refs/tags/v1.4.2.tar.gz"] = widget_archive("1.4.2")
    source = "Source, https://github.com/acme/widgets"
    install(tmp_path, monkeypatch, "widgets", "1.4.2", source, f"Documentation, {site.base}/old/")
    assert index_package("widgets", site)[0] == 0
    # The package's docs link moves: the knowledge base still cites the old site.
    install(tmp_path, monkeypatch, "widgets", "1.4.2", source, f"Documentation, {site.base}/new/")
    code, _, err = index_package("widgets", site)
    assert code == 1
    assert f"cites {site.base}/old/, but this run found {site.base}/new/1.4.2/" in err
    assert "not rewritten unasked" in err and f"--site-url {site.base}/old/" in err
    assert cite("widgets-1.4.2", "pip install") == f"{site.base}/old/guide/install/"
    # Asked for by name, the new site is used.
    code, out, err = index_package("widgets", site, "--site-url", f"{site.base}/new/")
    assert code == 0, err
    assert cite("widgets-1.4.2", "pip install") == f"{site.base}/new/1.4.2/guide/install/"
