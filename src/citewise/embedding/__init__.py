"""Embedders (bundled MiniLM, multilingual e5, OpenAI-compatible remote), windows and a cache."""

from __future__ import annotations

import inspect
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


def get_embedder(name: str = DEFAULT_EMBEDDER, **options: Any) -> Embedder:
    """Build the embedder registered as ``name`` with ``options`` as keyword arguments."""
    factory = get_embedder_factory(name)
    try:
        inspect.signature(factory).bind(**options)
    except TypeError as exc:
        raise ConfigurationError(f"embedder {name!r}: {exc}") from None
    except ValueError:
        pass  # factories without an inspectable signature check their own options
    return factory(**options)
