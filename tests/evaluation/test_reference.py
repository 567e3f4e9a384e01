"""Our ranking metrics agree with pytrec_eval (trec_eval) on a small graded run."""

from __future__ import annotations

import random

import pytest

from citewise.evaluation.metrics import mrr_at_k, ndcg_at_k, recall_at_k

pytrec_eval = pytest.importorskip("pytrec_eval")


def test_matches_pytrec_eval_on_random_graded_runs_with_tied_grades() -> None:
    rng = random.Random(7)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, list[str]] = {}
    for q in range(25):
        docs = [f"d{i}" for i in range(40)]
        # Grades 0-2 with many ties, as BEIR qrels have.
        qrels[f"q{q}"] = {doc: rng.choice([0, 1, 1, 2]) for doc in rng.sample(docs, 6)}
        runs[f"q{q}"] = rng.sample(docs, 30)
    # trec_eval ranks by score; give strictly decreasing scores to keep our order.
    scored = {q: {doc: 100.0 - rank for rank, doc in enumerate(r)} for q, r in runs.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut.10", "recall.10", "recall.100", "recip_rank"}
    )
    reference = evaluator.evaluate(scored)
    for q, ranked in runs.items():
        assert ndcg_at_k(ranked, qrels[q], 10) == pytest.approx(reference[q]["ndcg_cut_10"])
        assert recall_at_k(ranked, qrels[q], 100) == pytest.approx(reference[q]["recall_100"])
        # trec_eval's recip_rank is not cut at 10; compare where the first hit is in the top 10.
        first = next((i for i, d in enumerate(ranked) if qrels[q].get(d, 0) > 0), None)
        if first is not None and first < 10:
            assert mrr_at_k(ranked, qrels[q], 10) == pytest.approx(reference[q]["recip_rank"])
