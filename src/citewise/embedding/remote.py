"""An embedder for any OpenAI-compatible ``/v1/embeddings`` endpoint, through httpx."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from citewise.config import EmbeddingSettings
from citewise.embedding.base import Vectors, l2_normalise
from citewise.errors import ConfigurationError, EmbeddingError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"
# Known sizes spare a probe request at construction; other models are probed once.
_KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
_MAX_RETRY_AFTER = 30.0


class OpenAIEmbedder:
    """Embeds through ``POST {base_url}/embeddings`` (base_url ends in ``/v1``, as OpenAI's does).

    Settings come from the arguments, else ``CITEWISE_EMBEDDING_BASE_URL``,
    ``CITEWISE_EMBEDDING_API_KEY`` and ``CITEWISE_EMBEDDING_MODEL``. When the model's size is
    not known (and ``dimensions`` is not given) one probe request at construction learns it.
    Pass ``client`` to supply the ``httpx.Client`` (tests, proxies, custom TLS); the embedder
    then leaves closing it to the caller.
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        window_chars: int = 2000,
        client: httpx.Client | None = None,
    ) -> None:
        if batch_size < 1:
            raise ConfigurationError("embedding batch_size must be at least 1")
        if retries < 0:
            raise ConfigurationError("embedding retries cannot be negative")
        if dimensions is not None and dimensions < 1:
            raise ConfigurationError("embedding dimensions must be positive")
        env = EmbeddingSettings.from_env()
        self.base_url = (base_url or env.base_url or DEFAULT_BASE_URL).rstrip("/")
        self.url = f"{self.base_url}/embeddings"
        self.model = model or env.model or DEFAULT_MODEL
        self._api_key = api_key or env.api_key or None
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.window_chars = window_chars
        # A reduced size is a different vector space: it must not share cached vectors.
        suffix = f"@{dimensions}" if dimensions is not None else ""
        self.model_id = f"openai:{self.model}{suffix}"
        self._owns_client = client is None
        self._client = client if client is not None else httpx.Client(timeout=timeout)
        known = dimensions or _KNOWN_DIMS.get(self.model)
        if known is None:
            try:
                known = int(self._request(["dimension probe"]).shape[1])
            except BaseException:
                self.close()
                raise
        self.dim: int = known

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request(list(texts[start : start + self.batch_size]))
            for start in range(0, len(texts), self.batch_size)
        ]
        out = np.concatenate(parts)
        if out.shape[1] != self.dim:
            raise EmbeddingError(
                f"{self.url} returned {out.shape[1]}-dimensional vectors, expected {self.dim}"
            )
        return out

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text]).reshape(self.dim)

    def _request(self, batch: list[str]) -> Vectors:
        payload: dict[str, Any] = {"model": self.model, "input": batch}
        if self.dimensions is not None:
            payload["dimensions"] = self.dimensions
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        attempt = 0
        while True:
            delay = self.backoff * (2**attempt)
            try:
                response = self._client.post(
                    self.url, json=payload, headers=headers, timeout=self.timeout
                )
            except httpx.TransportError as exc:
                if attempt >= self.retries:
                    raise EmbeddingError(
                        f"embedding request to {self.url} failed after {attempt + 1} "
                        f"attempt(s): {type(exc).__name__}: {exc}"
                    ) from exc
            else:
                if response.status_code < 400:
                    return self._parse(response, len(batch))
                if response.status_code not in _RETRY_STATUSES or attempt >= self.retries:
                    raise EmbeddingError(
                        f"embedding request to {self.url} failed: HTTP {response.status_code}"
                        f"{_reason(response)}{_detail(response)}"
                    )
                delay = max(delay, _retry_after(response))
            time.sleep(delay)
            attempt += 1

    def _parse(self, response: httpx.Response, expected: int) -> Vectors:
        try:
            items = response.json()["data"]
            items = sorted(items, key=lambda item: int(item["index"]))
            vectors = np.array([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(
                f"{self.url} returned a response that is not an embeddings list: {exc!r}"
            ) from exc
        if vectors.ndim != 2 or vectors.shape[0] != expected:
            raise EmbeddingError(
                f"{self.url} returned {vectors.shape[0] if vectors.ndim else 0} vectors "
                f"for {expected} inputs"
            )
        # Providers differ on normalisation (and reduced dimensions are not unit length).
        return l2_normalise(vectors)


def _reason(response: httpx.Response) -> str:
    return f" {response.reason_phrase}" if response.reason_phrase else ""


def _detail(response: httpx.Response) -> str:
    """A short excerpt of the error body: providers explain there (bad key, unknown model)."""
    try:
        body = response.json()
        error = body.get("error", body) if isinstance(body, dict) else body
        message = error.get("message", error) if isinstance(error, dict) else error
        text = str(message)
    except ValueError:
        text = response.text
    text = " ".join(text.split())
    return f": {text[:300]}" if text else ""


def _retry_after(response: httpx.Response) -> float:
    value = response.headers.get("retry-after", "")
    try:
        return min(max(float(value), 0.0), _MAX_RETRY_AFTER)
    except ValueError:
        return 0.0
