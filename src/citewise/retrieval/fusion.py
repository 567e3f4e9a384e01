"""Reciprocal rank fusion: merge ranked lists of ids without comparing their raw scores."""

from __future__ import annotations

from collections.abc import Sequence


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    k: int = 60,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse rankings (best first) into one list of ``(id, score)``, best first.

    RRF (Cormack et al., 2009): ``score(d) = Σ_r w_r / (k + rank_r(d))`` with 1-based ranks,
    summed over the rankings that contain d. Only ranks are used, so BM25 and cosine scores,
    which live on unrelated scales, never need calibrating; ``k`` damps the head so one
    ranker's first place cannot outweigh agreement between rankers further down.

    An id repeated within one ranking counts at its best (first) rank. Ties keep the order
    in which ids first appear, ranking by ranking.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    elif len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    # sorted() is stable, so equal scores stay in first-appearance (dict insertion) order.
    return sorted(scores.items(), key=lambda pair: -pair[1])
