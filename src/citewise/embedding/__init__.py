"""Embedders (bundled MiniLM, multilingual e5, OpenAI-compatible remote), windows and a cache."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from citewise.embedding.base import (
    Embedder,
    Vectors,
    embedder_names,
    get_embedder_factory,
    l2_normalise,
    register_embedder,
)
from citewise.embedding.cache import CachedEmbedder, EmbeddingCache
from citewise.embedding.windows import embedding_windows
from citewise.errors import ConfigurationError

DEFAULT_EMBEDDER = "minilm"

__all__ = [
    "DEFAULT_EMBEDDER",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingCache",
    "Vectors",
    "embedder_names",
    "embedding_windows",
    "get_embedder",
    "l2_normalise",
    "register_embedder",
]


def get_embedder(
    name: str = DEFAULT_EMBEDDER, *, prepared_dir: Path | None = None, **options: Any
) -> Embedder:
    """Build the embedder registered as ``name`` with ``options`` as keyword arguments.

    ``prepared_dir``: where an embedder that takes it keeps files prepared from its model
    across processes (``embedding/prepared.py``); the others are built without it.
    """
    factory = get_embedder_factory(name)
    if prepared_dir is not None and _takes(factory, "prepared_dir"):
        options["prepared_dir"] = prepared_dir
    try:
        inspect.signature(factory).bind(**options)
    except TypeError as exc:
        raise ConfigurationError(f"embedder {name!r}: {exc}") from None
    except ValueError:
        pass  # factories without an inspectable signature check their own options
    return factory(**options)


def _takes(factory: Any, name: str) -> bool:
    try:
        return name in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
