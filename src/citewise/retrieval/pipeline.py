"""The retrieval pipeline behind the options: rewrite → search → fuse → rerank → expand."""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING

from citewise import telemetry
from citewise.asyncbridge import to_thread
from citewise.embedding.base import Embedder
from citewise.errors import ConfigurationError
from citewise.models import Hit
from citewise.options import SearchOptions
from citewise.retrieval.expand import expand_hits
from citewise.retrieval.hybrid import search_many
from citewise.retrieval.rerank import RERANKERS, make_reranker
from citewise.retrieval.rewrite import QUERY_REWRITES, rewrite_query
from citewise.store.base import KBStore, vectors_missing

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


async def retrieve(
    store: KBStore,
    embedder: Embedder | None,
    query: str,
    options: SearchOptions,
    *,
    model: BaseChatModel | None = None,
) -> list[Hit]:
    """The ``options.top_k`` best hits for ``query`` under ``options``, best first.

    With a rewrite, the question and its rewrites are searched separately and fused by
    relative-score RRF (``search_many``): each phrasing's scores relative to its own best,
    so no calibration across phrasings is needed. Each ranker brings
    ``candidates_per_ranker`` candidates. A reranker reorders the first
    ``rerank_candidates`` fused hits; the context window widens only the hits returned.

    Raises:
        ConfigurationError: an option needs a chat model (or reranker directory) that is
            not configured.
    """
    if not query.strip():
        return []
    if is_synchronous(options):
        # Nothing to await: one hop off the loop for the whole search, not one per stage.
        return await to_thread(retrieve_sync, store, embedder, query, options)
    # Made before any search, so a missing model (or model directory) fails fast.
    reranker = make_reranker(options.rerank, model, options.reranker_dir)
    with telemetry.stage("rewrite") if options.query_rewrite != "off" else nullcontext():
        queries = await rewrite_query(query, options.query_rewrite, model)
    depth = max(options.top_k, options.rerank_candidates if options.rerank != "off" else 0)
    hits = await to_thread(
        search_many, store, embedder, queries,
        k=depth, mode=options.ranker, filter=options.search_filter(),
        vector_weight=options.vector_weight, collapse=options.collapse_sections,
        candidates=options.candidates_per_ranker,
    )  # fmt: skip
    if reranker is not None:
        with telemetry.stage("rerank"):
            hits = await reranker.rank(query, hits)
    hits = hits[: options.top_k]
    if options.context_window <= 0:
        return hits
    with telemetry.stage("expand"):
        return await to_thread(
            expand_hits, store, hits, options.context_window, options.context_scope
        )


def while_embedding(store: KBStore, options: SearchOptions) -> SearchOptions:
    """``options``, searching by keywords alone while some of ``store``'s chunks still wait
    for their vectors (a knowledge base written text first): a dense ranking over part of
    the chunks would rank the embedded ones above the rest. Once every chunk has its
    vectors the options are as asked (hybrid). Applied once, by the caller, before it picks
    the embedder (``KnowledgeBase``): :func:`retrieve` takes the options as given."""
    if options.search_type == "full_text" or not vectors_missing(store):
        return options
    return options.merged({"search_type": "full_text"})


def check_names(options: SearchOptions) -> SearchOptions:
    """``options`` if the query rewrite and reranker they name are registered, else a
    ConfigurationError naming the option and the known names (nothing is imported)."""
    for field, registry in (("query_rewrite", QUERY_REWRITES), ("rerank", RERANKERS)):
        try:
            registry.check(getattr(options, field))
        except ConfigurationError as error:
            raise ConfigurationError(str(error), field=field) from None
    return options


def is_synchronous(options: SearchOptions) -> bool:
    """Whether a search under ``options`` awaits nothing (no chat model, no reranker), so
    :func:`retrieve_sync` can run it on the caller's thread."""
    return not options.needs_model and options.rerank == "off"


def retrieve_sync(
    store: KBStore, embedder: Embedder | None, query: str, options: SearchOptions
) -> list[Hit]:
    """:func:`retrieve` for options that need no model and no reranker, on this thread.

    Synchronous callers (the CLI, ``KnowledgeBase.search``) take this path: no event loop,
    no thread hops, so a query costs its stages and nothing more.

    Raises:
        ValueError: the options need a chat model or a reranker (use :func:`retrieve`).
    """
    if not is_synchronous(options):
        raise ValueError("these options need a model or a reranker: use retrieve()")
    if not query.strip():
        return []
    hits = search_many(
        store, embedder, [query], k=options.top_k, mode=options.ranker,
        filter=options.search_filter(), vector_weight=options.vector_weight,
        collapse=options.collapse_sections, candidates=options.candidates_per_ranker,
    )  # fmt: skip
    if options.context_window <= 0:
        return hits
    with telemetry.stage("expand"):
        return expand_hits(store, hits, options.context_window, options.context_scope)
