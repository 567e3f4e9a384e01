"""The Embedder protocol and the registry that maps embedder names to implementations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from citewise.registry import Registry

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    ``model_id`` names the model and its settings: vectors from different ids never mix.
    ``window_chars`` is how many characters of docs text the model reads in one input;
    longer chunks are embedded as overlapping windows of about that size.
    """

    model_id: str
    dim: int
    window_chars: int

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed passages; returns an array of shape ``(len(texts), dim)``."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """Embed one search query; returns an array of shape ``(dim,)``."""
        ...


def l2_normalise(vectors: npt.ArrayLike) -> Vectors:
    """Return ``vectors`` as float32 rows of unit length (all-zero rows stay zero)."""
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=-1, keepdims=True)
    # A zero row would become NaNs that poison every similarity it touches.
    return np.asarray(array / np.maximum(norms, np.float32(1e-12)), dtype=np.float32)


EmbedderFactory = Callable[..., Embedder]
EMBEDDERS: Registry[EmbedderFactory] = Registry(
    "embedder",
    {
        "minilm": "citewise.embedding.minilm:MiniLMEmbedder",
        "e5": "citewise.embedding.e5:E5Embedder",
        "openai": "citewise.embedding.remote:OpenAIEmbedder",
    },
)


def register_embedder(name: str, factory: EmbedderFactory | str) -> None:
    """Make an embedder available under ``name`` (a factory, or ``"module:attribute"``)."""
    EMBEDDERS.register(name, factory)


def embedder_names() -> list[str]:
    return EMBEDDERS.names()


def get_embedder_factory(name: str) -> EmbedderFactory:
    """The factory registered as ``name`` (ConfigurationError naming the known ones)."""
    return EMBEDDERS.get(name)


def check_embedder(name: str) -> None:
    """Fail now if the embedder ``name`` is unknown or its optional packages are missing
    (a factory may offer a cheap ``check_available()``); loads no model."""
    check = getattr(get_embedder_factory(name), "check_available", None)
    if callable(check):
        check()
