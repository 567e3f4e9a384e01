"""A small in-process LRU of query embeddings: a repeated question skips the model."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from citewise.embedding.base import Embedder, Vectors

# Big enough for a chat session's re-asked and planned queries, small enough to ignore
# (256 × 384 float32 = 0.4 MB for MiniLM).
DEFAULT_SIZE = 256


class QueryEmbeddings:
    """Query vectors by ``(embedder model id, text)``, least recently used evicted first.

    Vectors are returned read-only: one cached array is shared by every caller.
    """

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._vectors: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def embed(self, embedder: Embedder, text: str) -> Vectors:
        key = (embedder.model_id, text)
        with self._lock:
            vector = self._vectors.get(key)
            if vector is not None:
                self._vectors.move_to_end(key)
                self.hits += 1
                return vector
            self.misses += 1
        # Outside the lock: two threads embedding different queries must not wait on each other.
        vector = np.asarray(embedder.embed_query(text), dtype=np.float32)
        vector.setflags(write=False)
        with self._lock:
            self._vectors[key] = vector
            self._vectors.move_to_end(key)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return vector

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()


QUERY_EMBEDDINGS = QueryEmbeddings()
