"""The retrieval pipeline behind the options: rewrite → search → fuse → rerank → expand."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from citewise.embedding.base import Embedder
from citewise.errors import ConfigurationError
from citewise.models import Hit
from citewise.retrieval.expand import expand_hits
from citewise.retrieval.hybrid import search_many
from citewise.retrieval.options import RetrievalOptions
from citewise.retrieval.rerank import cross_encoder, rerank_cross_encoder, rerank_llm
from citewise.retrieval.rewrite import rewrite_query
from citewise.store.base import Store

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


async def retrieve(
    store: Store,
    embedder: Embedder | None,
    kb: str,
    query: str,
    options: RetrievalOptions,
    *,
    model: BaseChatModel | None = None,
) -> list[Hit]:
    """The ``options.top_k`` best hits for ``query`` under ``options``, best first.

    With a rewrite, the question and its rewrites are searched separately and fused by
    plain RRF (``search_many``): rank-based, because the phrasings' scores are not
    comparable. A reranker reorders the first ``rerank_candidates`` fused hits; the context
    window widens only the hits returned.

    Raises:
        ConfigurationError: an option needs a chat model (or reranker directory) that is
            not configured.
    """
    if not query.strip():
        return []
    if options.rerank == "llm" and model is None:
        raise ConfigurationError(
            "rerank=llm needs a chat model: set CITEWISE_LLM_MODEL (and CITEWISE_LLM_BASE_URL)"
        )
    # Loaded before any search, so a missing model directory fails fast.
    encoder = cross_encoder() if options.rerank == "cross_encoder" else None
    queries = await rewrite_query(query, options.query_rewrite, model)
    depth = max(options.top_k, options.rerank_candidates if options.rerank != "off" else 0)
    hits = await asyncio.to_thread(
        search_many, store, embedder, kb, queries,
        k=depth, mode=options.mode, filter=options.search_filter(),
    )  # fmt: skip
    if encoder is not None:
        hits = await asyncio.to_thread(rerank_cross_encoder, query, hits, encoder)
    elif options.rerank == "llm":
        assert model is not None
        hits = await rerank_llm(query, hits, model)
    hits = hits[: options.top_k]
    return await asyncio.to_thread(expand_hits, store, kb, hits, options.context_window)
