"""Helpers for the knowledge-base tests: one MiniLM embedder, uploads and KB factories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from citewise.config import Settings
from citewise.embedding import Embedder, get_embedder
from citewise.kb import IndexStrategy, KBConfig, KnowledgeBase, source_from_bytes
from citewise.options import SearchOptions
from citewise.sources import SourceFile

MakeKB = Callable[..., KnowledgeBase]


def upload(name: str, text: str) -> SourceFile:
    """A file as an upload would bring it."""
    return source_from_bytes(name, text.encode())


def sections(title: str, *bodies: str) -> str:
    """A Markdown page: ``title`` as h1, then one h2 section per body."""
    parts = [f"# {title}"]
    for n, body in enumerate(bodies, start=1):
        parts += [f"## Part {n}", body]
    return "\n\n".join(parts) + "\n"


@pytest.fixture(scope="session")
def minilm() -> Embedder:
    return get_embedder("minilm")


@pytest.fixture
def make_kb(tmp_path: Path, minilm: Embedder) -> MakeKB:
    """Creates knowledge bases in a fresh home, sharing the session's MiniLM."""

    def make(
        name: str = "files",
        strategy: str = "section",
        model: Any = None,
        defaults: SearchOptions | None = None,
        **sizes: int,
    ) -> KnowledgeBase:
        config = KBConfig(
            strategy=IndexStrategy(strategy, **sizes),
            embedder="minilm",
            defaults=defaults or SearchOptions(),
        )
        return KnowledgeBase.create(
            name, config, settings=Settings(home=tmp_path / "home"), embedder=minilm, model=model
        )

    return make
