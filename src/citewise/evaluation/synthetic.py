"""Synthetic knowledge bases of any size for the scale benchmarks, built without an embedder.

Text is sampled from a real corpus's vocabulary with its word frequencies (Zipf-like, as
real text is), one window per chunk, ten chunks per document. Vectors are random unit
vectors in clusters of about twenty (as embeddings of related passages are: with uniform
random vectors every query's neighbours would be near-ties, which no real corpus and no
approximate index looks like). Everything goes straight through the store's ``apply``.

A built knowledge base is kept under a folder (``{folder}/synthetic-{n}/synthetic.sqlite``)
and reused by the next run: 1M windows take minutes to write.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from citewise.models import Chunk, Document
from citewise.store import DocumentUpdate, SQLiteStore

__all__ = ["KB_NAME", "SyntheticKB", "build_synthetic", "query_vectors", "vocabulary"]

KB_NAME = "synthetic"
DIM = 384
CLUSTER = 20
PER_DOC = 10
BATCH = 5000  # chunks per write transaction
WORDS = (40, 120)  # words per chunk, uniform
VOCABULARY = 30_000
# Meta key written by the last batch: a knowledge base without it was interrupted.
DONE_KEY = "synthetic_windows"

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class SyntheticKB:
    root: Path  # the store folder (sqlite:///{root})
    windows: int
    seed: int


def vocabulary(corpus: Path, size: int = VOCABULARY) -> tuple[list[str], npt.NDArray[np.float64]]:
    """The ``size`` most frequent words of a BEIR ``corpus.jsonl`` and their frequencies."""
    counts: Counter[str] = Counter()
    for line in corpus.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        counts.update(
            re.findall(r"[a-z][a-z0-9-]+", f"{record.get('title', '')} {record['text']}".lower())
        )
    words, freq = zip(*counts.most_common(size), strict=True)
    p = np.array(freq, dtype=np.float64)
    return list(words), p / p.sum()


def _unit(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    out: npt.NDArray[np.float32] = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return out


def _centers(n: int, seed: int) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    return _unit(rng.standard_normal((max(1, n // CLUSTER), DIM)).astype(np.float32))


def _vectors(
    start: int, count: int, centers: npt.NDArray[np.float32], seed: int
) -> npt.NDArray[np.float32]:
    """Windows ``start..start+count``: each near its cluster's center (cosine about 0.7)."""
    rng = np.random.default_rng([seed, start])
    which = rng.integers(0, len(centers), size=count)
    noise = rng.standard_normal((count, DIM)).astype(np.float32) / np.sqrt(DIM)
    return _unit(centers[which] + noise)


def _batches(
    n: int, words: list[str], p: npt.NDArray[np.float64], seed: int
) -> Iterator[list[DocumentUpdate]]:
    centers = _centers(n, seed)
    vocab = np.array(words, dtype=object)
    for start in range(0, n, BATCH):
        count = min(BATCH, n - start)
        rng = np.random.default_rng([seed, start, 1])
        lengths = rng.integers(WORDS[0], WORDS[1] + 1, size=count)
        sampled = vocab[rng.choice(len(words), size=int(lengths.sum()), p=p)]
        ends = np.cumsum(lengths)
        vectors = _vectors(start, count, centers, seed)
        updates: list[DocumentUpdate] = []
        for d0 in range(0, count, PER_DOC):
            doc = f"d{(start + d0) // PER_DOC}"
            chunks, vecs = [], {}
            for j in range(d0, min(d0 + PER_DOC, count)):
                i = start + j
                text = " ".join(sampled[ends[j] - lengths[j] : ends[j]])
                number = i // PER_DOC
                chunk = Chunk(f"s{i}", doc, j - d0, 0, text, doc, (doc,), "", "",
                              f"p{number % 50}/", f"s{number % 7}", None)  # fmt: skip
                chunks.append(chunk)
                vecs[chunk.chunk_id] = vectors[j : j + 1]
            document = Document(doc, doc, "", chunks[0].page, doc, chunks[0].scope)
            updates.append(DocumentUpdate(document, chunks, vecs))
        yield updates


def build_synthetic(
    folder: Path, n: int, corpus: Path, *, seed: int = 0, progress: Progress | None = None
) -> SyntheticKB:
    """The synthetic knowledge base of ``n`` windows under ``folder``, built unless cached."""
    root = folder / f"synthetic-{n}"
    store = SQLiteStore(root, ann_threshold=0)
    try:
        if store.exists(KB_NAME):
            if store.open(KB_NAME).meta().get(DONE_KEY) == f"{n}:{seed}":
                return SyntheticKB(root, n, seed)
            store.drop(KB_NAME)  # an interrupted build
        kb = store.create(KB_NAME, {"embedder": "minilm"})
        words, p = vocabulary(corpus)
        for updates in _batches(n, words, p, seed):
            kb.apply(updates)
            if progress:
                done = sum(len(u.chunks) for u in updates)
                progress(done, n, "synthetic windows written")
        kb.apply(meta={DONE_KEY: f"{n}:{seed}"})
    finally:
        store.close()
    return SyntheticKB(root, n, seed)


def query_vectors(kb: SyntheticKB, count: int) -> npt.NDArray[np.float32]:
    """Queries near stored windows (as real questions are near their answers): stored
    vectors, regenerated from the seed, each moved by noise of a third of its cluster's."""
    rng = np.random.default_rng([kb.seed, 99])
    centers = _centers(kb.windows, kb.seed)
    picks = rng.choice(kb.windows, size=count, replace=False)
    rows = []
    for i in picks.tolist():
        start = i - i % BATCH
        rows.append(_vectors(start, min(BATCH, kb.windows - start), centers, kb.seed)[i - start])
    base = np.stack(rows)
    return _unit(base + rng.standard_normal(base.shape).astype(np.float32) / (3 * np.sqrt(DIM)))
