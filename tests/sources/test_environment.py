"""``citewise index --environment``: a knowledge base per installed distribution with docs,
per exact version, in a bare virtualenv whose release archives a local server holds."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.embedding import Embedder
from citewise.kb import Library
from citewise.kb.catalog import card_of
from citewise.sources.environment import installed_packages
from tests.kb_support import Gated, register_gated

from .conftest import LocalSite, versions_json, widget_archive
from .test_package import dist_info, run_cli

ARCHIVE = "/{owner}/{repo}/archive/refs/tags/v{version}.tar.gz"
VERSIONS = "/{owner}/{repo}/versions.json"


def bare_venv(root: Path) -> tuple[str, Path]:
    """A virtualenv without pip: its Python and its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = str(root / "bin" / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    return python, Path(purelib)


def publish(site: LocalSite, repo: str, version: str) -> None:
    site.files[f"/acme/{repo}/versions.json"] = versions_json((version, []))
    site.files[f"/acme/{repo}/archive/refs/tags/v{version}.tar.gz"] = widget_archive(
        version, top=f"{repo}-{version}/"
    )


def test_each_distribution_is_indexed_once_and_an_upgrade_only_again(
    tmp_path: Path, site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    python, packages = bare_venv(tmp_path / "venv")
    dist_info(packages, "widgets", "1.4.2", "Source, https://github.com/acme/widgets")
    dist_info(packages, "gizmos", "2.0", "Repository, https://github.com/acme/gizmos")
    dist_info(packages, "orphan", "0.1", "Homepage, https://orphan.example")
    publish(site, "widgets", "1.4.2")
    publish(site, "gizmos", "2.0")
    home = tmp_path / "home"
    monkeypatch.setenv("CITEWISE_HOME", str(home))
    argv = [
        "index",
        "--environment",
        "--python",
        python,
        "-q",  # fmt: skip
        "--versions-url",
        site.base + VERSIONS,
        "--archive-url",
        site.base + ARCHIVE,
    ]
    assert {p.name for p in installed_packages(python)} == {"widgets", "gizmos", "orphan"}

    code, out, err = run_cli(*argv)
    assert code == 0, err
    archives = sorted(path for path in site.requests if path.endswith(".tar.gz"))
    assert archives == ["/acme/gizmos/archive/refs/tags/v2.0.tar.gz",
                        "/acme/widgets/archive/refs/tags/v1.4.2.tar.gz"]  # fmt: skip
    assert "skipped (no repository link): orphan" in err
    library = Library(Settings(home=home))
    assert library.names() == ["gizmos-2.0", "widgets-1.4.2"]
    card = card_of(library.open("widgets-1.4.2"))
    assert (card.package, card.version) == ("widgets", "1.4.2")

    site.requests.clear()
    code, out, err = run_cli(*argv)
    assert code == 0, err
    assert site.requests == []  # nothing fetched: each is indexed at its installed version
    assert "widgets 1.4.2: up to date (widgets-1.4.2)" in err and "2 up to date" in err

    # Upgrade one package: only it is fetched and indexed again.
    for old in packages.glob("widgets-1.4.2.dist-info"):
        for file in old.iterdir():
            file.unlink()
        old.rmdir()
    dist_info(packages, "widgets", "1.5.0", "Source, https://github.com/acme/widgets")
    publish(site, "widgets", "1.5.0")
    code, out, err = run_cli(*argv)
    assert code == 0, err
    assert all(path.startswith("/acme/widgets/") for path in site.requests)
    assert "/acme/widgets/archive/refs/tags/v1.5.0.tar.gz" in site.requests
    assert "gizmos 2.0: up to date" in err
    assert "widgets-1.5.0" in Library(Settings(home=home)).names()


def test_environment_names_its_knowledge_bases_itself() -> None:
    code, _, err = run_cli("index", "--environment", "--kb", "mine")
    assert code == 1 and "--environment names each knowledge base" in err


def lazy_widgets(
    tmp_path: Path, site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, str]:
    """widgets 1.4.2 installed in a bare venv, published on ``site`` and recorded by
    ``citewise index --environment --lazy``: the home, and the command's stderr."""
    python, packages = bare_venv(tmp_path / "venv")
    dist_info(packages, "widgets", "1.4.2", "Source, https://github.com/acme/widgets")
    publish(site, "widgets", "1.4.2")
    home = tmp_path / "home"
    monkeypatch.setenv("CITEWISE_HOME", str(home))
    code, _, err = run_cli(
        "index", "--environment", "--lazy", "--python", python, "-q",
        "--versions-url", site.base + VERSIONS, "--archive-url", site.base + ARCHIVE,
    )  # fmt: skip
    assert code == 0, err
    return home, err


def test_lazy_records_each_package_and_the_first_question_indexes_it(
    tmp_path: Path, site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citewise.kb import Status
    from citewise.kb.multi import KnowledgeBases

    home, err = lazy_widgets(tmp_path, site, monkeypatch)
    assert site.requests == []  # nothing fetched yet
    assert "widgets 1.4.2: acme/widgets, indexed on first use (widgets-1.4.2)" in err
    library = Library(Settings(home=home))
    kbs = KnowledgeBases(library)
    (card,) = kbs.cards()
    assert (card.name, card.package, card.version) == ("widgets-1.4.2", "widgets", "1.4.2")

    events = list(kbs.stream("How do I install widgets?"))
    statuses = [event.text for event in events if isinstance(event, Status)]
    assert statuses[0] == "Indexing widgets 1.4.2: the first question about it"
    assert "Indexed widgets 1.4.2" in statuses
    assert any(text.startswith("Searching widgets 1.4.2") for text in statuses)
    assert library.names() == ["widgets-1.4.2"]
    fetched = list(site.requests)
    assert "/acme/widgets/archive/refs/tags/v1.4.2.tar.gz" in fetched
    answer = kbs.ask("How do I install widgets?")  # the next question: nothing fetched
    assert answer.hits and site.requests == fetched


def test_the_first_question_is_answered_by_keywords_while_the_library_is_embedded(
    tmp_path: Path, site: LocalSite, monkeypatch: pytest.MonkeyPatch, minilm: Embedder
) -> None:
    from citewise.kb import Done, Status, vector_fill
    from citewise.kb.multi import KnowledgeBases

    held = Gated(minilm)
    register_gated("held-minilm", held)
    home, err = lazy_widgets(tmp_path, site, monkeypatch)
    library = Library(Settings(home=home, embedder="held-minilm"))
    kbs = KnowledgeBases(library)

    # The embedder is held: the answer can only come from the keyword index.
    events = list(kbs.stream("How do I install widgets?"))
    assert held.calls == 0
    statuses = [event.text for event in events if isinstance(event, Status)]
    assert "Indexing widgets 1.4.2: 0 of 5 sections embedded, searching by keywords meanwhile" in (
        statuses
    ), statuses
    answer = events[-1]
    assert isinstance(answer, Done) and answer.answer.hits and answer.answer.citations
    assert all(hit.rankers == ("keyword",) for hit in answer.answer.hits)

    held.gate.set()
    state = vector_fill.progress(library.open("widgets-1.4.2"))
    assert state is not None
    for _ in range(600):
        if not state.running:
            break
        time.sleep(0.05)
    assert (state.done, state.total, state.error) == (5, 5, None)
    later = kbs.ask("How do I install widgets?")
    assert any("dense" in hit.rankers for hit in later.hits)
