"""Choosing a store by URL: the built-in schemes, errors, and engines registered at run time."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import citewise.store.registry as registry
from citewise.errors import ConfigurationError
from citewise.store import SQLiteStore, Store, open_store, register_store, store_schemes
from citewise.store.memory import MemoryStore
from tests.store.support import BASE, BASE_IDS


@pytest.fixture(autouse=True)
def restore_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Stores registered by a test are gone afterwards (the contract suite tests every one)."""
    monkeypatch.setattr(registry.STORES, "_targets", dict(registry.STORES._targets))
    monkeypatch.setattr(registry.STORES, "_loaded", dict(registry.STORES._loaded))
    yield


def sqlite_root(url: str | None, home: Path) -> Path:
    store = open_store(url, home=home)
    assert isinstance(store, SQLiteStore)
    store.close()
    return store.root


def test_the_built_in_schemes() -> None:
    assert store_schemes() == ["memory", "postgres", "postgresql", "sqlite"]


@pytest.mark.parametrize(
    ("url", "folder"),
    [
        (None, "kb"),
        ("", "kb"),
        ("sqlite://", "kb"),
        ("sqlite://stores/main", "stores/main"),
        ("SQLite://kbs", "kbs"),
        ("sqlite://with%20space", "with space"),
    ],
)
def test_sqlite_urls_name_a_folder_under_home(tmp_path: Path, url: str | None, folder: str) -> None:
    assert sqlite_root(url, tmp_path) == tmp_path / folder


def test_sqlite_urls_with_three_slashes_are_absolute(tmp_path: Path) -> None:
    assert sqlite_root(f"sqlite://{tmp_path}/elsewhere", tmp_path / "home") == (
        tmp_path / "elsewhere"
    )


def test_the_default_store_is_the_sqlite_folder_kb_in_home(tmp_path: Path) -> None:
    open_store(None, home=tmp_path).create("docs").apply(BASE)
    assert (tmp_path / "kb" / "docs.sqlite").is_file()
    again = open_store("sqlite://kb", home=tmp_path)
    assert again.open("docs").chunk_ids() == BASE_IDS
    again.close()


@pytest.mark.parametrize("url", ["sqlite://kbs?mode=ro", "sqlite://kbs#x"])
def test_sqlite_urls_take_no_options(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigurationError, match="sqlite:///absolute/folder"):
        open_store(url, home=tmp_path)


def test_memory_urls_name_a_store_shared_by_the_process(tmp_path: Path) -> None:
    first = open_store("memory://registry-test", home=tmp_path)
    assert isinstance(first, MemoryStore)
    first.create("kb").apply(BASE)
    try:
        same = open_store("memory://registry-test", home=tmp_path / "elsewhere")
        assert same is first and same.open("kb").chunk_ids() == BASE_IDS
        assert open_store("memory://registry-other", home=tmp_path).names() == []
        assert "kb" not in open_store("memory://", home=tmp_path).names()
    finally:
        first.drop("kb")


@pytest.mark.parametrize(
    "url", ["mysql://user:s3cret@db/citewise", "redis://s3cret@cache", "MongoDB+srv://x"]
)
def test_an_unknown_scheme_names_the_known_ones(tmp_path: Path, url: str) -> None:
    with pytest.raises(
        ConfigurationError, match=r"\(known: memory, postgres, postgresql, sqlite\)"
    ) as err:
        open_store(url, home=tmp_path)
    assert url.partition(":")[0].lower() in str(err.value)
    assert "s3cret" not in str(err.value)  # a URL may hold a password: never echo it


@pytest.mark.parametrize("url", ["/var/lib/kbs", "kbs", "sqlite:kbs", "://kbs"])
def test_a_url_needs_a_scheme(tmp_path: Path, url: str) -> None:
    with pytest.raises(
        ConfigurationError, match=r"scheme://.*known schemes: memory, postgres, postgresql, sqlite"
    ):
        open_store(url, home=tmp_path)


def test_a_store_registered_at_run_time_is_opened_by_its_scheme(tmp_path: Path) -> None:
    opened: list[tuple[str, Path]] = []

    def factory(url: str, home: Path) -> Store:
        opened.append((url, home))
        return MemoryStore()

    register_store("Fake", factory)
    assert store_schemes() == ["fake", "memory", "postgres", "postgresql", "sqlite"]
    store = open_store("fake://anything/at all", home=tmp_path)
    assert isinstance(store, MemoryStore)
    assert opened == [("fake://anything/at all", tmp_path)]
    assert open_store("FAKE://x", home=tmp_path) is not store


def test_a_store_can_be_registered_by_import_path(tmp_path: Path) -> None:
    register_store("scratch", "citewise.store.memory:from_url")
    assert "scratch" in store_schemes()
    assert isinstance(open_store("scratch://registry-test", home=tmp_path), MemoryStore)
    register_store("sqlite", "citewise.store.memory:from_url")  # a built-in can be replaced
    assert isinstance(open_store(None, home=tmp_path), MemoryStore)


def test_importing_the_package_loads_no_other_engine() -> None:
    code = (
        "import sys, citewise.store; "
        "loaded = sorted(m for m in sys.modules if m.startswith('citewise')); "
        "assert 'citewise.store.memory' not in loaded, loaded; "
        "assert 'citewise.embedding' not in loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
