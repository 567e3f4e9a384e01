"""Hybrid search: dense and BM25 candidates fused by reciprocal rank fusion."""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Literal

from citewise import telemetry
from citewise.embedding.base import Embedder
from citewise.embedding.query_lru import QUERY_EMBEDDINGS
from citewise.models import Chunk, Hit, SearchFilter
from citewise.retrieval.apiunits import Mention, api_unit, mentions, named_objects
from citewise.retrieval.collapse import collapse_sections
from citewise.retrieval.fusion import reciprocal_rank_fusion, relative_score_rrf
from citewise.retrieval.proximity import is_question, sentence_coverage
from citewise.store.base import KBStore
from citewise.store.identifiers import query_identifiers

Mode = Literal["hybrid", "vector", "keyword"]
MODES: tuple[Mode, ...] = ("hybrid", "vector", "keyword")
RRF_K = 60
# Tuned on SciFact and the LGOS dev cases (benchmarks/): 20 candidates per ranker found every
# dev-case page in the top 10 where 10 missed one; a cutoff above 0.2 cost dev-case MRR and
# below it changed nothing, so it only trims the long tail of incidental keyword matches.
DEFAULT_CANDIDATES = 20
KEYWORD_CUTOFF = 0.2
_RANKERS = ("dense", "keyword", "name", "proximity")
# Chosen by measurement on question sets holding both prose and API questions (LGOS, its
# API and dev cases, requests, and the unseen sites' tuning half; see
# benchmarks/retrieval-unseen.md): an API entry's fused score is scaled by API_WEIGHT
# unless the question names its object, and the objects a question names join the fusion
# as a third ranking of weight NAME_WEIGHT (dense and keyword have 1 each).
API_WEIGHT = 0.95
NAME_WEIGHT = 2.0
# Proximity at 0.5 (chosen on the fusion branch) cost the 56 LGOS cases' MRR (citewise eval,
# 0.821 without it → 0.793) though it helped requests (0.910 → 0.949); 0.2 keeps LGOS at 0.820
# with no set below main (benchmarks/retrieval-unseen.md, "On the merged main").
PROXIMITY_WEIGHT = 0.2
# A query that is nothing but identifiers (`request_to_input`, `LGOS_OPENAI_API_PREFIX`) is an
# exact lookup: an embedding of a bare name says little about where it is defined (vector
# search put the defining section first for 56-72% of the identifier cases, keyword search
# for 96%), so such a query gives the dense ranker this share of the two (keyword the rest).
BARE_IDENTIFIER_DENSE_SHARE = 0.5
# Keyword candidates searched for the objects a question names (their words only).
_NAME_CANDIDATES = 30
# The keyword query runs here while this thread embeds the query and ranks by vectors: both
# SQLite and onnxruntime/numpy release the GIL, so a hybrid query costs the slower of the two.
_KEYWORD_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="citewise-keyword")


def _fuse(
    rankings: Sequence[Sequence[Hit]],
    k: int | None,
    rrf_k: int,
    *,
    by_score: bool = False,
    weights: Sequence[float] | None = None,
) -> list[Hit]:
    """RRF over ranked lists of hits; a fused hit keeps every ranker that found it.

    ``by_score`` weights each term by the hit's score relative to its list's best (the
    ratio is scale-free, so lists from different rankers, or from different phrasings of a
    question, need no calibration); otherwise plain RRF by rank alone.
    """
    chunks: dict[str, Chunk] = {}
    found_by: dict[str, set[str]] = {}
    also: dict[str, tuple[Chunk, ...]] = {}
    for hits in rankings:
        for hit in hits:
            chunks.setdefault(hit.chunk.chunk_id, hit.chunk)
            found_by.setdefault(hit.chunk.chunk_id, set()).update(hit.rankers)
            if hit.also:
                also[hit.chunk.chunk_id] = (*also.get(hit.chunk.chunk_id, ()), *hit.also)
    if by_score:
        fused = relative_score_rrf(
            [[(hit.chunk.chunk_id, hit.score) for hit in hits] for hits in rankings],
            k=rrf_k,
            weights=weights,
        )
    else:
        fused = reciprocal_rank_fusion(
            [[hit.chunk.chunk_id for hit in hits] for hits in rankings], k=rrf_k
        )
    return [
        Hit(
            chunks[cid],
            score,
            tuple(r for r in _RANKERS if r in found_by[cid]),
            tuple({c.chunk_id: c for c in also.get(cid, ())}.values()),
        )
        for cid, score in (fused if k is None else fused[:k])
    ]


def fuse_queries(rankings: Sequence[Sequence[Hit]]) -> list[Hit]:
    """Ranked lists of hits for different phrasings of one question (each best first) in
    one list, ordered by relative-score RRF as :func:`search_many` fuses them; each chunk
    once, as the hit its first list holds (its own score, not the fused one, so a single
    list comes back unchanged)."""
    first: dict[str, Hit] = {}
    for hits in rankings:
        for hit in hits:
            first.setdefault(hit.chunk.chunk_id, hit)
    fused = relative_score_rrf(
        [[(hit.chunk.chunk_id, hit.score) for hit in hits] for hits in rankings], k=RRF_K
    )
    return [first[cid] for cid, _ in fused]


def _named(store: KBStore, named: Sequence[Mention], filter: SearchFilter | None) -> list[Hit]:
    """The API entries of the objects named (``Alias.final_target``), strongest first:
    found among the keyword matches of the names' own words."""
    if not named:
        return []
    words = " ".join(dict.fromkeys(part for mention in named for part in mention.parts))
    with telemetry.stage("names"):
        found = [chunk for chunk, _ in store.keyword(words, _NAME_CANDIDATES, filter)]
        return [Hit(c, s, ("name",)) for c, s in named_objects(named, found)]


def _proximity(query: str, rankings: Sequence[Sequence[Hit]]) -> list[Hit]:
    """The rankers' candidates ordered by how much of ``query`` their best sentence holds."""
    chunks = list({hit.chunk.chunk_id: hit.chunk for hits in rankings for hit in hits}.values())
    with telemetry.stage("proximity"):
        scores = sentence_coverage(query, chunks)
    ranked = sorted(
        ((c, s) for c, s in zip(chunks, scores, strict=True) if s > 0), key=lambda p: -p[1]
    )
    return [Hit(c, s, ("proximity",)) for c, s in ranked]


def weigh_api_entries(hits: Sequence[Hit], api_weight: float) -> list[Hit]:
    """``hits`` with each API entry's score scaled by ``api_weight`` (those the question
    names excepted), best first again."""
    if api_weight == 1.0:
        return list(hits)
    weighed = [
        replace(hit, score=hit.score * api_weight)
        if "name" not in hit.rankers and api_unit(hit.chunk) is not None
        else hit
        for hit in hits
    ]
    return sorted(weighed, key=lambda hit: -hit.score)


def _finish(hits: Sequence[Hit], k: int, collapse: bool) -> list[Hit]:
    return (collapse_sections(hits) if collapse else list(hits))[:k]


def _keyword(store: KBStore, query: str, n: int, filter: SearchFilter | None) -> list[Hit]:
    with telemetry.stage("keyword"):
        return [Hit(c, s, ("keyword",)) for c, s in store.keyword(query, n, filter)]


def search(
    store: KBStore,
    embedder: Embedder | None,
    query: str,
    *,
    k: int = 10,
    mode: str = "hybrid",
    filter: SearchFilter | None = None,
    candidates: int = DEFAULT_CANDIDATES,
    keyword_cutoff: float = KEYWORD_CUTOFF,
    rrf_k: int = RRF_K,
    vector_weight: float | None = None,
    collapse: bool = True,
    api_weight: float | None = None,
    name_weight: float | None = None,
) -> list[Hit]:
    """The k best chunks for ``query``, best first (with ``collapse``, each section once).

    ``hybrid`` takes ``max(candidates, k)`` dense and BM25 candidates and fuses them by RRF
    weighted by relative score (``relative_score_rrf``); only keyword matches scoring at
    least ``keyword_cutoff`` × the best BM25 score join, so a query's weak incidental word
    matches do not outvote the dense ranker. A hit's
    ``score`` is the fused score in hybrid mode, else the ranker's own (cosine or BM25).
    ``embedder`` may be None for ``keyword`` mode. ``mode`` is a plain str (checked here)
    because it usually arrives from a CLI flag or a request. ``vector_weight`` (0..1) is
    the dense ranker's share of the hybrid fusion, the keyword ranker's being the rest
    (None: equal shares).

    In hybrid mode the API entries of objects the query names (``Object.is_public``) are
    a third ranking, of weight ``name_weight``, so the object asked for comes before its
    namesakes; when the query names no object, every API entry's fused score is scaled by
    ``api_weight`` (None: ``NAME_WEIGHT`` and ``API_WEIGHT``). With
    ``collapse`` the chunks of one section count once, at their best chunk's rank (the
    others in ``Hit.also``), so a top k holds k sections.
    """
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r} (known: {', '.join(MODES)})")
    if k <= 0 or not query.strip():
        return []
    n = max(candidates, k)
    if mode != "keyword" and embedder is None:
        raise ValueError(f"{mode} search needs an embedder")
    pending: Future[list[Hit]] | None = None
    if mode == "hybrid":
        # A copied context, so the keyword stage is timed within this query's operation.
        pending = _KEYWORD_POOL.submit(
            contextvars.copy_context().run, _keyword, store, query, n, filter
        )
    dense: list[Hit] = []
    try:
        if embedder is not None and mode != "keyword":
            with telemetry.stage("embed_query"):
                vector = QUERY_EMBEDDINGS.embed(embedder, query)
            with telemetry.stage("dense"):
                dense = [Hit(c, s, ("dense",)) for c, s in store.dense(vector, n, filter)]
    except BaseException:
        # The keyword query must not outlive the search: its caller may close the store
        # next, and a connection closed under a running query crashes the process.
        if pending is not None and not pending.cancel():
            wait([pending])
        raise
    if mode == "vector":
        return _finish(dense, k, collapse)
    keyword = pending.result() if pending is not None else _keyword(store, query, n, filter)
    if mode == "keyword":
        return _finish(keyword, k, collapse)
    if keyword and keyword[0].score > 0:
        floor = keyword_cutoff * keyword[0].score
        keyword = [hit for hit in keyword if hit.score >= floor]
    api_weight = API_WEIGHT if api_weight is None else api_weight
    name_weight = NAME_WEIGHT if name_weight is None else name_weight
    proximity_weight = PROXIMITY_WEIGHT
    # Equal dense and keyword shares are 1 each; ``vector_weight`` splits their 2. The names,
    # proximity and the API prior are the text's side: they shrink with the keyword share,
    # so ``vector_weight=1`` ranks by the embeddings alone.
    if vector_weight is None and is_bare_identifier_lookup(query):
        vector_weight = BARE_IDENTIFIER_DENSE_SHARE / 2
    shares = (1.0, 1.0) if vector_weight is None else (2 * vector_weight, 2 - 2 * vector_weight)
    text_side = min(shares[1], 1.0)
    name_weight, proximity_weight = name_weight * text_side, proximity_weight * text_side
    api_weight = 1.0 - (1.0 - api_weight) * text_side
    names = mentions(query)
    named = _named(store, names, filter) if name_weight > 0 else []
    near = (
        _proximity(query, [dense, keyword, named])
        if proximity_weight > 0 and is_question(query)
        else []
    )
    with telemetry.stage("fuse"):
        fused = _fuse(
            [dense, keyword, named, near], None, rrf_k, by_score=True,
            weights=(*shares, name_weight, proximity_weight),
        )  # fmt: skip
        # A question that names no object is asked in prose: the API prior applies to it.
        return _finish(weigh_api_entries(fused, 1.0 if names else api_weight), k, collapse)


def is_bare_identifier_lookup(query: str) -> bool:
    """Whether every word of ``query`` is an identifier (``snake_case``, ``ENV_VAR``, a dotted
    path, a ``--flag``, ``name()``), quotes and backticks aside: a lookup, not a question."""
    words = [word.strip("`'\"?.,:;!") for word in query.split()]
    words = [word for word in words if word]
    return bool(words) and all(query_identifiers(word) for word in words)


def search_many(
    store: KBStore,
    embedder: Embedder | None,
    queries: Sequence[str],
    *,
    k: int = 10,
    mode: str = "hybrid",
    filter: SearchFilter | None = None,
    candidates: int = DEFAULT_CANDIDATES,
    keyword_cutoff: float = KEYWORD_CUTOFF,
    rrf_k: int = RRF_K,
    vector_weight: float | None = None,
    collapse: bool = True,
    api_weight: float | None = None,
    name_weight: float | None = None,
    by_score: bool = True,
) -> list[Hit]:
    """Search several phrasings of a question and fuse their results by RRF.

    Each query contributes its own ranked list (of ``max(candidates, k)`` hits); a hit's
    ``rankers`` is the union over the queries that found it. One distinct query gives
    exactly ``search``'s result. ``by_score`` (the default) weights each term by the hit's
    fused score relative to its phrasing's best (``relative_score_rrf``, as the rankers of
    one query are fused), so a phrasing that matched nothing well counts little; false:
    plain rank RRF. Measured on planner query sets: ``benchmarks/retrieval-parity.md``.
    """
    distinct = list(dict.fromkeys(q for q in queries if q.strip()))

    def one(query: str, n: int) -> list[Hit]:
        return search(
            store, embedder, query, k=n, mode=mode, filter=filter, candidates=candidates,
            keyword_cutoff=keyword_cutoff, rrf_k=rrf_k, vector_weight=vector_weight,
            collapse=collapse, api_weight=api_weight, name_weight=name_weight,
        )  # fmt: skip

    if len(distinct) == 1:
        return one(distinct[0], k)
    rankings = [one(q, max(candidates, k)) for q in distinct]
    with telemetry.stage("fuse"):
        return _finish(_fuse(rankings, None, rrf_k, by_score=by_score), k, collapse)
