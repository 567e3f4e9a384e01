"""Helpers for the knowledge-base tests: one MiniLM embedder, uploads and KB factories."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from citewise.config import ParseSettings, Settings
from citewise.embedding import Embedder, get_embedder
from citewise.embedding.base import Vectors
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
        parse: ParseSettings | None = None,
        **sizes: int,
    ) -> KnowledgeBase:
        config = KBConfig(
            strategy=IndexStrategy(strategy, **sizes),
            embedder="minilm",
            defaults=defaults or SearchOptions(),
        )
        return KnowledgeBase.create(
            name, config, settings=Settings(home=tmp_path / "home", parse=parse), embedder=minilm,
            model=model,
        )  # fmt: skip

    return make


class Gated:
    """MiniLM itself, each ``embed_documents`` call waiting for ``gate`` (the test's hold
    on the embedding), counting the texts it embedded; ``fail_on`` makes that call raise."""

    def __init__(self, inner: Embedder, *, fail_on: int | None = None) -> None:
        self.inner = inner
        self.model_id, self.dim, self.window_chars = inner.model_id, inner.dim, inner.window_chars
        self.window_tokens = getattr(inner, "window_tokens")  # noqa: B009
        self.gate = threading.Event()
        self.calls = 0
        self.texts = 0
        self.fail_on = fail_on

    def token_spans(self, text: str) -> Sequence[tuple[int, int]]:
        return getattr(self.inner, "token_spans")(text)  # type: ignore[no-any-return]  # noqa: B009

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        assert self.gate.wait(60), "the test never released the embedder"
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("the embedding thread died")
        self.texts += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)


def register_gated(name: str, gated: Gated) -> None:
    """Make ``gated`` the embedder registered as ``name`` (a library loading ``name`` gets
    it): the registry is the seam a plugin embedder uses too."""
    from citewise.embedding import register_embedder

    register_embedder(name, lambda: gated)
