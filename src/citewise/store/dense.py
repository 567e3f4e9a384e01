"""The in-memory dense index: a knowledge base's window vectors as one matrix, with filters."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from citewise.embedding.base import Vectors
from citewise.store.base import SearchFilter


def as_windows(vectors: Vectors) -> Vectors:
    windows = np.ascontiguousarray(vectors, dtype=np.float32)
    if windows.ndim == 1:
        windows = windows.reshape(1, -1)
    if windows.ndim != 2 or windows.shape[0] == 0 or windows.shape[1] == 0:
        raise ValueError(f"vectors must have shape (n_windows, dim), got {vectors.shape}")
    return windows


def scope_member(scopes: npt.NDArray[np.str_], scope: str) -> npt.NDArray[np.bool_]:
    """Which chunks' scope lists (space-separated) contain ``scope``, or equal it exactly."""
    # A knowledge base has a handful of distinct scope lists: test each once, not per chunk.
    distinct, inverse = np.unique(scopes, return_inverse=True)
    member = np.array([s == scope or scope in s.split(" ") for s in distinct.tolist()], dtype=bool)
    return member[inverse.reshape(-1)] if len(distinct) else np.zeros(len(scopes), dtype=bool)


@dataclass(frozen=True)
class DenseIndex:
    """A knowledge base's window vectors as one matrix, windows of a chunk in adjacent rows."""

    generation: str
    matrix: Vectors  # (n_windows, dim)
    starts: npt.NDArray[np.intp]  # first window row of each chunk
    rids: npt.NDArray[np.int64]
    scopes: npt.NDArray[np.str_]
    pages: npt.NDArray[np.str_]
    doc_ids: npt.NDArray[np.str_]

    def mask(self, f: SearchFilter | None) -> npt.NDArray[np.bool_] | None:
        if f is None:
            return None
        keep = np.ones(len(self.rids), dtype=bool)
        if f.scope is not None:
            keep &= scope_member(self.scopes, f.scope)
        if f.page_prefix:
            keep &= np.char.startswith(self.pages, f.page_prefix)
        if f.doc_ids is not None:
            keep &= np.isin(self.doc_ids, np.array(f.doc_ids, dtype=str))
        return keep
