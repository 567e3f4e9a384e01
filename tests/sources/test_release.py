"""Indexing a published release through the real download path, from a server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from citewise.config import Settings
from citewise.embedding import Embedder
from citewise.errors import (
    DocsFolderMissingError,
    DownloadError,
    ReleaseNotFoundError,
    UnsafeArchiveError,
)
from citewise.kb import KnowledgeBase, Library
from citewise.kb.releases import ReleaseIndex, index_release
from citewise.sources.archive import ExtractLimits
from citewise.sources.nav import ScopeRule
from citewise.sources.release import FetchLimits, ReleaseSpec, fetch_release, release_kb_name

from ..conftest import LGOS, LGOS_SITE, require
from .conftest import LocalSite, folder_members, tar_gz, versions_json, widget_archive

LGOS_REPO = "ilkersigirci/langgraph-openai-serve"
LGOS_KB = "langgraph-openai-serve-0.12.0"
ARCHIVE_PATH = "/{owner}/{repo}/archive/refs/tags/v{version}.tar.gz"


def no_network() -> httpx.Client:
    """A client that fails the test on any request."""

    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request to {request.url}")

    return httpx.Client(transport=httpx.MockTransport(refuse))


def run_cli(*argv: str) -> tuple[int, str, str]:
    from citewise.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


# -- the LGOS release, indexed once per session through the CLI ------------------------------


@dataclass
class LgosRelease:
    home: Path
    site: LocalSite
    report: dict[str, object]


@pytest.fixture(scope="session")
def lgos_release(
    lgos_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LgosRelease]:
    """LGOS 0.12.0 served as a tag archive and indexed by ``citewise index --release``.

    In a copy of the session's LGOS home, so its embeddings come from the cache and the
    shared home keeps its one knowledge base (other tests count them).
    """
    home = tmp_path_factory.mktemp("lgos-release-home")
    shutil.copytree(lgos_home, home, dirs_exist_ok=True)
    docs = require(LGOS / "docs")
    top = "langgraph-openai-serve-0.12.0/"
    members = folder_members(docs, top + "docs/")
    members[top + "zensical.toml"] = (LGOS / "zensical.toml").read_bytes()
    members[top + "README.md"] = b"# LangGraph OpenAI Serve\n"
    site = LocalSite()
    site.files["/versions.json"] = (LGOS / "_site_gh-pages" / "versions.json").read_bytes()
    site.files[f"/{LGOS_REPO}/archive/refs/tags/v0.12.0.tar.gz"] = tar_gz(members)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEWISE_HOME", str(home))
        code, out, err = run_cli(
            "index", "--release", f"{LGOS_REPO}@0.12.0",
            "--site-url", LGOS_SITE,
            "--versions-url", site.url("/versions.json"),
            "--archive-url", site.base + ARCHIVE_PATH,
            "--separate-scope", "demo", "--json", "-q",
        )  # fmt: skip
    assert code == 0, err
    yield LgosRelease(home, site, json.loads(out))
    site.stop()


def search(release: LgosRelease, query: str, *options: str) -> list[dict[str, str]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEWISE_HOME", str(release.home))
        code, out, err = run_cli("search", query, "--kb", LGOS_KB, "--json", *options)
    assert code == 0, err
    hits: list[dict[str, str]] = json.loads(out)
    return hits


def test_cli_indexes_the_release_and_records_it(lgos_release: LgosRelease) -> None:
    report = lgos_release.report
    assert report["kb"] == LGOS_KB and report["files"] == 24
    assert report["release"] == "0.12.0" and report["requested_version"] == "0.12.0"
    assert lgos_release.site.requests == [
        "/versions.json",
        f"/{LGOS_REPO}/archive/refs/tags/v0.12.0.tar.gz",
    ]
    kb = KnowledgeBase(LGOS_KB, settings=Settings(home=lgos_release.home))
    meta = kb.meta()
    assert (meta["release"], meta["release_repo"]) == ("0.12.0", LGOS_REPO)
    assert kb.scopes == ("all", "demo", "explanation", "how-to-guides", "library", "tutorials")


def test_scope_demo_returns_only_demo_stack_pages(lgos_release: LgosRelease) -> None:
    hits = search(lgos_release, "settings and commands of the stack", "--scope", "demo")
    assert hits
    assert all(hit["page"].startswith("demo/") for hit in hits)


def test_scope_library_returns_no_demo_stack_page(lgos_release: LgosRelease) -> None:
    query = "Docker Compose services Chainlit Open WebUI Bifrost"
    assert any(hit["page"].startswith("demo/") for hit in search(lgos_release, query))
    hits = search(lgos_release, query, "--scope", "library")
    assert hits
    assert not any(hit["page"].startswith("demo/") for hit in hits)


def test_section_urls_are_the_published_urls_of_that_release(lgos_release: LgosRelease) -> None:
    index = json.loads(require(LGOS / "_site_gh-pages" / "0.12.0-search.json").read_text())
    published = {item["location"] for item in index["items"]}
    hits = search(lgos_release, "How do I put LGOS behind LiteLLM?", "--scope", "library")
    base = f"{LGOS_SITE}0.12.0/"
    assert hits[0]["page"] == "how-to-guides/openai-proxies/"
    for hit in hits:
        assert hit["url"].startswith(base) and hit["url"][len(base) :] in published


def test_a_second_run_makes_no_request_and_embeds_nothing(lgos_release: LgosRelease) -> None:
    spec = ReleaseSpec.parse(
        f"{LGOS_REPO}@0.12.0",
        site_url=LGOS_SITE,
        versions_url="http://127.0.0.1:9/unused.json",
        archive_url="http://127.0.0.1:9/unused.tar.gz",
        scope_rule=ScopeRule(separate=("demo",)),
    )
    library = Library(Settings(home=lgos_release.home))
    result = index_release(spec, library, client=no_network())
    assert result.release.requests == 0
    assert result.report.chunks_embedded == 0 and len(result.report.unchanged) == 24


def test_unknown_scope_is_refused_with_the_known_ones(lgos_release: LgosRelease) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEWISE_HOME", str(lgos_release.home))
        code, _, err = run_cli("search", "x", "--kb", LGOS_KB, "--scope", "demos")
    assert code == 1
    assert "unknown scope 'demos'" in err and "demo, explanation" in err


# -- a small widgets release, one server per test -------------------------------------------


@pytest.fixture
def widgets(site: LocalSite) -> LocalSite:
    site.files["/versions.json"] = versions_json(
        ("2.0.0", ["latest"]), ("1.2.0-rc1", []), ("1.0.0", []), ("3.0.0-never-tagged", [])
    )
    for version in ("2.0.0", "1.2.0-rc1", "1.0.0"):
        site.files[f"/widgets/widgets/archive/refs/tags/v{version}.tar.gz"] = widget_archive(
            version
        )
    return site


def spec_for(site: LocalSite, version: str, **options: object) -> ReleaseSpec:
    return ReleaseSpec.parse(
        f"widgets/widgets@{version}",
        site_url="https://widgets.example/",
        versions_url=site.url("/versions.json"),
        archive_url=site.base + ARCHIVE_PATH,
        **options,
    )


@pytest.mark.parametrize(
    ("requested", "fallback", "release", "how"),
    [
        ("1.0.0", False, "1.0.0", "exact"),
        ("1.2.0rc1", False, "1.2.0-rc1", "normalized"),
        ("0.0.1", False, "2.0.0", "development"),
        ("1.9.0", True, "2.0.0", "fallback"),
    ],
)
def test_the_release_is_resolved_downloaded_and_extracted(
    widgets: LocalSite, settings: Settings, requested: str, fallback: bool, release: str, how: str
) -> None:
    fetched = fetch_release(spec_for(widgets, requested, fallback_latest=fallback), settings)
    assert (fetched.version, fetched.resolved.how) == (release, how)
    assert widgets.requests == [
        "/versions.json",
        f"/widgets/widgets/archive/refs/tags/v{release}.tar.gz",
    ]
    assert fetched.docs == settings.home / "releases/widgets/widgets" / release / "source/docs"
    install = (fetched.docs / "guide" / "install.md").read_text()
    assert f"widgets=={release}" in install
    assert fetched.archive.is_file()
    assert fetched.meta()["requested_version"] == requested


def test_default_kb_name_is_repo_and_release() -> None:
    assert release_kb_name("langgraph-openai-serve", "0.12.0") == LGOS_KB
    assert release_kb_name("My_Repo", "1.2.0+local") == "my_repo-1.2.0-local"


@pytest.mark.parametrize(
    ("version", "error", "message"),
    [
        ("1.3.0", ReleaseNotFoundError, "release '1.3.0' is not published"),
        ("3.0.0-never-tagged", ReleaseNotFoundError, "source archive is not published"),
    ],
)
def test_missing_releases_are_clear_errors(
    widgets: LocalSite, settings: Settings, version: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        fetch_release(spec_for(widgets, version), settings)
    assert not list((settings.home / "releases").rglob("archive.*"))


def test_missing_versions_json_names_the_url(widgets: LocalSite, settings: Settings) -> None:
    del widgets.files["/versions.json"]
    with pytest.raises(ReleaseNotFoundError, match="no versions.json at http://127.0.0.1"):
        fetch_release(spec_for(widgets, "1.0.0"), settings)


def test_archive_without_docs_is_a_clear_error_and_is_not_kept(
    widgets: LocalSite, settings: Settings
) -> None:
    widgets.files["/widgets/widgets/archive/refs/tags/v1.0.0.tar.gz"] = tar_gz(
        {"widgets-1.0.0/README.md": b"# no docs here\n"}
    )
    with pytest.raises(DocsFolderMissingError, match="has no docs folder widgets-1.0.0/docs/"):
        fetch_release(spec_for(widgets, "1.0.0"), settings)
    release_dir = settings.home / "releases/widgets/widgets/1.0.0"
    assert sorted(p.name for p in release_dir.iterdir()) == []


def test_hostile_archive_is_refused_with_nothing_written_outside_the_cache(
    widgets: LocalSite, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    widgets.files["/widgets/widgets/archive/refs/tags/v1.0.0.tar.gz"] = tar_gz(
        {"w/docs/index.md": b"# Home\n", "w/docs/../../../escaped.md": b"pwned"}
    )
    with pytest.raises(UnsafeArchiveError, match="refused"):
        fetch_release(spec_for(widgets, "1.0.0"), settings)
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and settings.home not in p.parents]
    assert outside == []
    assert [p.name for p in settings.home.rglob("*") if p.is_file()] == ["versions.json"]


def test_a_bomb_over_the_extract_cap_is_refused(widgets: LocalSite, settings: Settings) -> None:
    widgets.files["/widgets/widgets/archive/refs/tags/v1.0.0.tar.gz"] = tar_gz(
        {"w/docs/index.md": b"# Home\n", "w/docs/zeros.md": bytes(4 << 20)}
    )
    limits = FetchLimits(extract=ExtractLimits(max_bytes=1 << 20))
    with pytest.raises(UnsafeArchiveError, match="decompression bomb"):
        fetch_release(spec_for(widgets, "1.0.0"), settings, limits=limits)


def test_a_download_over_the_size_cap_stops_and_leaves_no_part_file(
    widgets: LocalSite, settings: Settings
) -> None:
    limits = FetchLimits(max_archive_bytes=100)
    with pytest.raises(DownloadError, match="v1.0.0.tar.gz is .*over the"):
        fetch_release(spec_for(widgets, "1.0.0"), settings, limits=limits)
    assert [p.name for p in settings.home.rglob("*") if p.is_file()] == ["versions.json"]


def test_network_errors_name_the_url(settings: Settings) -> None:
    closed = LocalSite()
    closed.stop()  # nothing listens on its port any more
    spec = ReleaseSpec.parse("widgets/widgets@1.0.0", versions_url=closed.url("/versions.json"))
    with pytest.raises(
        DownloadError, match=f"network error fetching {closed.url('/versions.json')}"
    ):
        fetch_release(spec, settings)


def test_http_errors_name_the_status_and_url(widgets: LocalSite, settings: Settings) -> None:
    widgets.status["/versions.json"] = 503
    with pytest.raises(DownloadError, match=r"HTTP 503 fetching http://127\.0\.0\.1:\d+/versions"):
        fetch_release(spec_for(widgets, "1.0.0"), settings)


def test_cli_second_start_works_with_the_server_stopped(
    widgets: LocalSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    argv = [
        "index", "--release", "widgets/widgets@0.0.1",
        "--site-url", "https://widgets.example/",
        "--versions-url", widgets.url("/versions.json"),
        "--archive-url", widgets.base + ARCHIVE_PATH, "-q",
    ]  # fmt: skip
    code, out, err = run_cli(*argv)
    assert code == 0, err
    assert "widgets-2.0.0: 5 files (5 added" in out
    assert "release 2.0.0 (for 0.0.1: development version, latest docs)" in out
    widgets.stop()
    code, out, err = run_cli(*argv)
    assert code == 0, err
    assert "5 unchanged" in out and len(widgets.requests) == 2
    code, out, err = run_cli("search", "caching proxy", "--kb", "widgets-2.0.0", "--json")
    hit = json.loads(out)[0]
    assert hit["url"] == "https://widgets.example/2.0.0/examples/cache/"


def test_cli_errors_are_one_line(widgets: LocalSite, tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
        code, _, err = run_cli(
            "index", "--release", "widgets/widgets@1.3.0",
            "--versions-url", widgets.url("/versions.json"),
        )  # fmt: skip
    assert code == 1
    assert err.startswith("citewise: error: release '1.3.0' is not published")
    assert len(err.strip().splitlines()) == 1


def test_release_index_builds_once_and_retries_after_a_failure(
    widgets: LocalSite, settings: Settings
) -> None:
    archive = widgets.files.pop("/widgets/widgets/archive/refs/tags/v1.0.0.tar.gz")
    index = ReleaseIndex(spec_for(widgets, "1.0.0"), Library(settings))
    with pytest.raises(ReleaseNotFoundError):
        index.get()
    assert not index.ready and index.release is None
    widgets.files["/widgets/widgets/archive/refs/tags/v1.0.0.tar.gz"] = archive

    results = []
    threads = [threading.Thread(target=lambda: results.append(index.get())) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(kb) for kb in results}) == 1
    kb = results[0]
    assert kb.name == "widgets-1.0.0" and index.release is not None
    assert index.release.version == "1.0.0"
    # The second attempt resolves from the cached versions.json and fetches only the archive.
    assert widgets.requests.count("/versions.json") == 1
    assert widgets.requests.count("/widgets/widgets/archive/refs/tags/v1.0.0.tar.gz") == 2
    (hit,) = kb.search("pip install", top_k=1)
    assert hit.url == "https://widgets.example/1.0.0/guide/install/"


def test_a_served_release_answers_by_keywords_while_it_is_embedded(
    widgets: LocalSite, tmp_path: Path, minilm: Embedder
) -> None:
    from citewise.kb import vector_fill
    from citewise.store.base import vectors_missing
    from tests.kb_support import Gated, register_gated

    held = Gated(minilm)
    register_gated("held-minilm-release", held)
    library = Library(Settings(home=tmp_path / "home", embedder="held-minilm-release"))
    index = ReleaseIndex(spec_for(widgets, "1.0.0"), library)
    kb = index.get()
    assert held.calls == 0 and vectors_missing(kb.store) > 0
    (hit,) = kb.search("pip install", top_k=1)
    assert hit.url == "https://widgets.example/1.0.0/guide/install/"
    assert hit.rankers == ("keyword",)
    held.gate.set()
    state = vector_fill.progress(kb)
    assert state is not None
    for _ in range(600):
        if not state.running:
            break
        time.sleep(0.05)
    assert state.error is None and vectors_missing(kb.store) == 0
    (hit,) = kb.search("pip install", top_k=1)
    assert "dense" in hit.rankers


def test_a_release_request_defers_the_build_to_its_first_search(
    widgets: LocalSite, settings: Settings
) -> None:
    """Before the release is built, its request carries the build: resolving and a reply
    that searches nothing fetch nothing; the first search builds it once and runs there,
    under the options checked against the built index."""
    index = ReleaseIndex(spec_for(widgets, "1.0.0"), Library(settings))
    kb, request = index.request({"top_k": 1})
    assert request.store is None and request.build is not None and not index.ready
    assert widgets.requests == []
    (hit,) = kb.search("pip install", request)
    assert index.ready and hit.url == "https://widgets.example/1.0.0/guide/install/"
    assert widgets.requests.count("/versions.json") == 1
    # Built now: the next request is resolved against the index, with nothing deferred.
    built, resolved = index.request({"top_k": 2})
    assert built is index.get() and resolved.build is None and resolved.store is not None
    assert resolved.options.top_k == 2
    (again,) = kb.search("pip install", request)  # the first request still searches the same
    assert again.url == hit.url and widgets.requests.count("/versions.json") == 1
