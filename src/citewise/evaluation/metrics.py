"""Ranking metrics (nDCG, recall, MRR, hit, all-relevant, precision) over a run and judgements."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

# qrels: query id → {doc id: graded relevance}; run: query id → ranked doc ids, best first.
Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Sequence[str]]


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """nDCG@k with linear gains (rel / log2(rank + 1)), as trec_eval and BEIR compute it."""
    dcg = sum(relevant.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    wanted = {doc for doc, gain in relevant.items() if gain > 0}
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def mrr_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Reciprocal rank of the first relevant document within the top k (0 if none)."""
    for rank, doc in enumerate(ranked[:k], start=1):
        if relevant.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def evaluate(run: Run, qrels: Qrels) -> dict[str, float]:
    """Mean nDCG@10, Recall@100 and MRR@10 over the queries that have judgements."""
    queries = [q for q in qrels if any(g > 0 for g in qrels[q].values())]
    if not queries:
        return {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    totals = {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    for query in queries:
        ranked = run.get(query, [])
        totals["ndcg@10"] += ndcg_at_k(ranked, qrels[query], 10)
        totals["recall@100"] += recall_at_k(ranked, qrels[query], 100)
        totals["mrr@10"] += mrr_at_k(ranked, qrels[query], 10)
    return {name: value / len(queries) for name, value in totals.items()}


def hit_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """1 when any relevant document is in the top k, else 0."""
    return 1.0 if any(relevant.get(doc, 0) > 0 for doc in ranked[:k]) else 0.0


def all_relevant_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """1 when every relevant document is in the top k (what a multi-hop answer needs), else 0."""
    wanted = {doc for doc, gain in relevant.items() if gain > 0}
    return 1.0 if wanted and wanted <= set(ranked[:k]) else 0.0


def precision_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Relevant documents in the top k over k (a list shorter than k still divides by k)."""
    return sum(1 for doc in ranked[:k] if relevant.get(doc, 0) > 0) / k if k > 0 else 0.0


AT_K = {
    "hit": hit_at_k,
    "all_relevant": all_relevant_at_k,
    "precision": precision_at_k,
    "recall": recall_at_k,
    "mrr": mrr_at_k,
    "ndcg": ndcg_at_k,
}
"""Every metric at a cut-off, by the name ``evaluate_at`` reports it under (``hit@3``)."""


def evaluate_at(run: Run, qrels: Qrels, ks: Sequence[int] = (1, 3, 5)) -> dict[str, float]:
    """Mean of each :data:`AT_K` metric at each k (``hit@1`` … ``ndcg@5``) over judged queries."""
    queries = [q for q in qrels if any(g > 0 for g in qrels[q].values())]
    names = [f"{name}@{k}" for name in AT_K for k in ks]
    if not queries:
        return dict.fromkeys(names, 0.0)
    totals = dict.fromkeys(names, 0.0)
    for query in queries:
        ranked = run.get(query, [])
        for name, metric in AT_K.items():
            for k in ks:
                totals[f"{name}@{k}"] += metric(ranked, qrels[query], k)
    return {name: value / len(queries) for name, value in totals.items()}
