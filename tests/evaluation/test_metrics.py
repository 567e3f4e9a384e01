"""Ranking metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from citewise.evaluation.metrics import evaluate, mrr_at_k, ndcg_at_k, recall_at_k


def test_ndcg_binary_hand_computed() -> None:
    # relevant at ranks 1 and 3: DCG = 1 + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3)
    value = ndcg_at_k(["a", "x", "b"], {"a": 1, "b": 1}, 10)
    assert value == pytest.approx(1.5 / (1 + 1 / math.log2(3)))


def test_ndcg_graded_uses_linear_gain_and_ideal_order() -> None:
    # gains 1 at rank 1, 2 at rank 2: DCG = 1 + 2/log2(3); IDCG = 2 + 1/log2(3)
    value = ndcg_at_k(["low", "high"], {"low": 1, "high": 2}, 10)
    assert value == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))


def test_ndcg_cut_at_k_and_empty_judgements() -> None:
    assert ndcg_at_k(["x", "a"], {"a": 1}, 1) == 0.0
    assert ndcg_at_k(["a"], {}, 10) == 0.0
    assert ndcg_at_k(["a"], {"a": 1}, 10) == 1.0


def test_recall_and_mrr() -> None:
    relevant = {"a": 1, "b": 1, "c": 0}
    assert recall_at_k(["x", "a", "c"], relevant, 3) == 0.5
    assert recall_at_k(["x", "a", "b"], relevant, 2) == 0.5
    assert mrr_at_k(["x", "c", "b"], relevant, 10) == pytest.approx(1 / 3)
    assert mrr_at_k(["x", "y"], relevant, 10) == 0.0


def test_evaluate_averages_over_judged_queries_only() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"z": 0}}
    run = {"q1": ["a"], "q2": ["x", "b"]}
    figures = evaluate(run, qrels)
    assert figures["mrr@10"] == pytest.approx((1 + 0.5) / 2)
    assert figures["recall@100"] == 1.0
