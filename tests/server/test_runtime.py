"""Server options from the environment and the knowledge bases a server answers from."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.errors import ConfigurationError, KnowledgeBaseError
from citewise.knowledge import KnowledgeBase
from citewise.server.runtime import KnowledgeBases, ServerOptions


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


def test_a_release_is_the_default_and_is_built_by_the_first_request(
    lgos_home: Path, lgos_kb: KnowledgeBase
) -> None:
    release = FakeRelease(lgos_kb)
    kbs = KnowledgeBases(Settings(home=lgos_home), release=release)  # type: ignore[arg-type]
    assert kbs.scopes() == ("all",)  # listing settings never fetches a release
    assert release.builds == 0
    assert kbs.get() is lgos_kb and release.ready
    assert kbs.default_name == "lgos" and kbs.get("lgos") is lgos_kb
    assert kbs.scopes() == lgos_kb.scopes


def test_unknown_knowledge_bases_are_named_in_the_error(lgos_home: Path) -> None:
    kbs = KnowledgeBases(Settings(home=lgos_home), default="lgos")
    assert kbs.get() is kbs.get("lgos")  # opened once, embedder loaded once
    assert kbs.names() == ["lgos"]
    with pytest.raises(KnowledgeBaseError, match="unknown knowledge base 'nope'.*lgos"):
        kbs.get("nope")
