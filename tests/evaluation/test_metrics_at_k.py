"""hit@k, all_relevant@k, precision@k and evaluate_at against hand-computed values."""

from __future__ import annotations

import pytest

from citewise.evaluation.metrics import (
    all_relevant_at_k,
    evaluate_at,
    hit_at_k,
    precision_at_k,
)

RELEVANT = {"a": 1, "b": 1}


@pytest.mark.parametrize(
    ("ranked", "k", "hit", "everything", "precision"),
    [
        (["a", "x", "b"], 1, 1.0, 0.0, 1.0),
        (["a", "x", "b"], 3, 1.0, 1.0, 2 / 3),
        (["x", "y", "a"], 2, 0.0, 0.0, 0.0),
        (["b"], 3, 1.0, 0.0, 1 / 3),  # a short list still divides by k
    ],
)
def test_at_k(ranked: list[str], k: int, hit: float, everything: float, precision: float) -> None:
    assert hit_at_k(ranked, RELEVANT, k) == hit
    assert all_relevant_at_k(ranked, RELEVANT, k) == everything
    assert precision_at_k(ranked, RELEVANT, k) == pytest.approx(precision)


def test_no_relevant_documents_is_never_all_relevant() -> None:
    assert all_relevant_at_k(["a"], {}, 3) == 0.0


def test_evaluate_at_averages_over_judged_queries() -> None:
    run = {"q1": ["a", "b"], "q2": ["x", "c"], "unjudged": ["a"]}
    qrels = {"q1": RELEVANT, "q2": {"c": 1}, "empty": {"z": 0}}
    result = evaluate_at(run, qrels, (1, 2))
    assert result["hit@1"] == 0.5 and result["hit@2"] == 1.0
    assert result["all_relevant@2"] == 1.0 and result["mrr@2"] == 0.75
    assert result["recall@1"] == pytest.approx((0.5 + 0.0) / 2)
    assert set(result) == {f"{m}@{k}" for m in
                           ("hit", "all_relevant", "precision", "recall", "mrr", "ndcg")
                           for k in (1, 2)}  # fmt: skip
