"""Baselines measured beside citewise in the same process: rank_bm25 and a LangChain ensemble."""

from __future__ import annotations

import importlib
import re
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from citewise.embedding.base import Embedder
from citewise.errors import MissingExtraError

Corpus = dict[str, tuple[str, str]]
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Baseline:
    """A built baseline: how long indexing took and a query → ranked doc ids function."""

    name: str
    index_seconds: float
    rank: Callable[[str], list[str]]


def require_baselines() -> None:
    """Fail now, naming the extra, if a baseline's packages are missing: before an hour of
    embedding, not after it."""
    for module, package in (
        ("rank_bm25", "rank_bm25"),
        ("langchain_classic.retrievers", "langchain-classic"),
        ("langchain_community.retrievers", "langchain-community"),
    ):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                importlib.import_module(module)
        except ImportError:
            raise MissingExtraError(
                package, "bench", "The benchmark's baselines (--no-baselines skips them)"
            ) from None


def rank_bm25_baseline(corpus: Corpus, depth: int = 100) -> Baseline:
    """Okapi BM25 from ``rank_bm25`` over lower-cased word tokens (no stemming)."""
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        raise MissingExtraError("rank_bm25", "bench", "The rank_bm25 baseline") from None

    def tokens(text: str) -> list[str]:
        return _WORD.findall(text.lower())

    doc_ids = list(corpus)
    started = time.perf_counter()
    bm25 = BM25Okapi([tokens(f"{title} {text}") for title, text in corpus.values()])
    index_seconds = time.perf_counter() - started

    def rank(query: str) -> list[str]:
        scores = bm25.get_scores(tokens(query))
        top = sorted(range(len(doc_ids)), key=lambda i: -scores[i])[:depth]
        return [doc_ids[i] for i in top]

    return Baseline("rank_bm25", round(index_seconds, 2), rank)


def langchain_ensemble_baseline(corpus: Corpus, embedder: Embedder, depth: int = 100) -> Baseline:
    """The hybrid most RAG tutorials build: LangChain's ``InMemoryVectorStore`` and
    ``BM25Retriever`` in an ``EnsembleRetriever`` (weighted RRF, 0.5/0.5), with our embedder.

    Each document is embedded whole, as the tutorials do (the model truncates what it cannot
    read); the index time is embedding plus building both retrievers.
    """
    try:
        with warnings.catch_warnings():
            # langchain-community announces its own sunset on import; that is not our error.
            warnings.simplefilter("ignore", DeprecationWarning)
            from langchain_classic.retrievers import EnsembleRetriever
            from langchain_community.retrievers import BM25Retriever
        from langchain_core.documents import Document
        from langchain_core.embeddings import Embeddings
        from langchain_core.vectorstores import InMemoryVectorStore
    except ImportError:
        raise MissingExtraError(
            "langchain-classic", "bench", "The LangChain ensemble baseline"
        ) from None

    class Adapter(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [list(map(float, row)) for row in embedder.embed_documents(texts)]

        def embed_query(self, text: str) -> list[float]:
            return [float(x) for x in embedder.embed_query(text)]

    documents = [
        Document(page_content=f"{title}\n\n{text}", metadata={"id": doc_id})
        for doc_id, (title, text) in corpus.items()
    ]
    started = time.perf_counter()
    store = InMemoryVectorStore(Adapter())
    store.add_documents(documents)
    keyword = BM25Retriever.from_documents(documents, k=depth)
    ensemble = EnsembleRetriever(
        retrievers=[keyword, store.as_retriever(search_kwargs={"k": depth})],
        weights=[0.5, 0.5],
    )
    index_seconds = time.perf_counter() - started

    def rank(query: str) -> list[str]:
        return [str(doc.metadata["id"]) for doc in ensemble.invoke(query)][:depth]

    return Baseline("langchain_ensemble", round(index_seconds, 2), rank)
