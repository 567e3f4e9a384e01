"""Server options from the environment and the one library of knowledge bases a server uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.errors import ConfigurationError, KnowledgeBaseError
from citewise.kb import KnowledgeBase, SearchOptions
from citewise.server.runtime import Runtime, ServerOptions


def test_options_from_the_environment() -> None:
    options = ServerOptions.from_env(
        {
            "CITEWISE_KB": "lgos",
            "CITEWISE_API_KEYS": " a, b ,,",
            "CITEWISE_ADMIN_KEYS": "root",
            "CITEWISE_RELEASE": "ilkersigirci/langgraph-openai-serve@0.12.0",
        }
    )
    assert options.kb == "lgos"
    assert options.api_keys == {"a", "b"} and options.admin_keys == {"root"}
    assert options.release is not None and options.release.version == "0.12.0"
    assert ServerOptions.from_env({}) == ServerOptions()
    with pytest.raises(ConfigurationError):
        ServerOptions.from_env({"CITEWISE_RELEASE": "no-version"})


class FakeRelease:
    """Stands in for ReleaseIndex: builds (here: opens) its knowledge base on first get()."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.kb_name: str | None = None
        self.builds = 0

    @property
    def ready(self) -> bool:
        return self.builds > 0

    def get(self) -> KnowledgeBase:
        self.builds += 1
        return self.kb


def test_a_release_is_the_default_and_is_built_by_the_first_request(lgos_home: Path) -> None:
    runtime = Runtime(Settings(home=lgos_home), ServerOptions(), model_factory=lambda: None)
    lgos = runtime.library.open("lgos")
    release = FakeRelease(lgos)
    runtime.release = release  # type: ignore[assignment]
    # Listing settings never fetches a release.
    assert runtime.scopes() == ("all",) and runtime.defaults() == SearchOptions()
    assert release.builds == 0
    assert runtime.kb() is lgos and release.ready
    assert runtime.default_name == "lgos" and runtime.kb("lgos") is lgos
    assert runtime.scopes() == lgos.scopes


def test_one_library_opens_each_knowledge_base_once(lgos_home: Path) -> None:
    runtime = Runtime(Settings(home=lgos_home), ServerOptions(kb="lgos"))
    assert runtime.kb() is runtime.kb("lgos") is runtime.library.get("lgos")
    assert runtime.names() == ["lgos"]
    assert runtime.defaults() == runtime.kb().config.defaults


def test_unknown_knowledge_bases_are_named_in_the_error(lgos_home: Path) -> None:
    runtime = Runtime(Settings(home=lgos_home), ServerOptions(kb="lgos"))
    with pytest.raises(KnowledgeBaseError, match="unknown knowledge base 'nope'.*lgos"):
        runtime.kb("nope")
    assert runtime.scopes("nope") == ("all",)
