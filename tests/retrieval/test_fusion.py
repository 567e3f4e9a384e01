"""Reciprocal rank fusion, differentially tested against a direct transcription of the formula."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from citewise.retrieval import reciprocal_rank_fusion


def reference_rrf(
    rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """score(d) = sum over rankings r containing d of w_r / (k + first 1-based rank of d in r)."""
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    order: list[str] = []
    for ranking in rankings:
        for d in ranking:
            if d not in order:
                order.append(d)
    scores = {
        d: sum(
            w / (k + list(r).index(d) + 1) for r, w in zip(rankings, weights, strict=True) if d in r
        )
        for d in order
    }
    best = sorted(order, key=lambda d: (-scores[d], order.index(d)))
    return [(d, scores[d]) for d in best]


def test_textbook_example() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "c", "d"]], k=60)
    assert [d for d, _ in fused] == ["b", "c", "a", "d"]
    assert dict(fused)["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert dict(fused)["a"] == pytest.approx(1 / 61)


def test_empty_inputs() -> None:
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([[], []]) == []


def test_duplicates_count_at_their_first_rank() -> None:
    assert reciprocal_rank_fusion([["a", "a", "b"]], k=0) == [("a", 1.0), ("b", 1 / 3)]


def test_weights_and_validation() -> None:
    fused = reciprocal_rank_fusion([["a"], ["b"]], weights=[1.0, 2.0])
    assert [d for d, _ in fused] == ["b", "a"]
    with pytest.raises(ValueError, match="weights"):
        reciprocal_rank_fusion([["a"]], weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="k must be"):
        reciprocal_rank_fusion([["a"]], k=-1)


@pytest.mark.parametrize("seed", range(200))
def test_matches_reference(seed: int) -> None:
    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(rng.randint(1, 30))]
    rankings = [
        [rng.choice(pool) for _ in range(rng.randint(0, 15))] for _ in range(rng.randint(1, 5))
    ]
    k = rng.choice([0, 1, 10, 60])
    weights = [rng.choice([0.5, 1.0, 2.0]) for _ in rankings] if seed % 2 else None
    got = reciprocal_rank_fusion(rankings, k=k, weights=weights)
    want = reference_rrf(rankings, k=k, weights=weights)
    # Both sum the same terms in the same order, so even ties must come out identically.
    assert got == want


def test_relative_score_rrf_weights_each_term_by_score_over_best() -> None:
    from citewise.retrieval.fusion import relative_score_rrf

    fused = dict(relative_score_rrf([[("a", 2.0), ("b", 1.0)], [("b", 0.5), ("c", 0.25)]], k=60))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(0.5 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(0.5 / 62)


def test_relative_score_rrf_demotes_a_weak_match_that_plain_rrf_ranks_equal() -> None:
    from citewise.retrieval.fusion import relative_score_rrf

    dense = [("strong", 0.9), ("weak", 0.1)]
    keyword = [("weak2", 10.0), ("strong2", 9.5)]
    plain = dict(reciprocal_rank_fusion([[i for i, _ in dense], [i for i, _ in keyword]]))
    weighted = dict(relative_score_rrf([dense, keyword]))
    assert plain["weak"] == plain["strong2"]
    assert weighted["weak"] < weighted["strong2"]


def test_relative_score_rrf_handles_non_positive_best_and_negatives() -> None:
    from citewise.retrieval.fusion import relative_score_rrf

    fused = dict(relative_score_rrf([[("a", -0.2), ("b", -0.5)], [("a", 1.0), ("b", -1.0)]]))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 61)
    assert fused["b"] == pytest.approx(1 / 62)


def test_relative_score_rrf_weights_scale_each_ranking() -> None:
    from citewise.retrieval.fusion import relative_score_rrf

    dense = [("a", 0.9), ("b", 0.8)]
    keyword = [("b", 10.0), ("a", 1.0)]
    assert relative_score_rrf([dense, keyword], k=0)[0][0] == "b"
    assert relative_score_rrf([dense, keyword], k=0, weights=[0.9, 0.1])[0][0] == "a"
    with pytest.raises(ValueError, match="2 rankings"):
        relative_score_rrf([dense, keyword], weights=[1.0])
