"""`bench beir` on a tiny BEIR-format dataset written by the test."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from citewise.cli import main
from citewise.config import Settings
from citewise.errors import SourceError
from citewise.evaluation.beir import _percentiles, load_beir, run_beir_benchmark

DOCS = {
    "d1": ("Aspirin", "Aspirin reduces the risk of heart attack in adults."),
    "d2": ("Vitamin D", "Vitamin D deficiency is linked to weaker bones."),
    "d3": ("Sleep", "Adults who sleep less than six hours report more colds."),
    "d4": ("Coffee", "Coffee consumption is associated with alertness."),
}
QUERIES = {"q1": "does aspirin prevent heart attacks", "q2": "vitamin d and bone strength"}


def write_dataset(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "\n".join(json.dumps({"_id": k, "title": t, "text": x}) for k, (t, x) in DOCS.items())
    )
    (folder / "queries.jsonl").write_text(
        "\n".join(json.dumps({"_id": k, "text": v}) for k, v in QUERIES.items())
    )
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    return folder


def test_every_mode_and_the_baseline_find_the_obvious_answers(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "tiny")
    report = run_beir_benchmark(
        dataset, settings=Settings(home=tmp_path / "home"), embedder_name="minilm"
    )
    assert report["documents"] == 4 and report["queries"] == 2
    for mode in ("vector", "keyword", "hybrid"):
        assert report["modes"][mode]["ndcg@10"] == pytest.approx(1.0), mode
        assert report["modes"][mode]["p50_ms"] > 0
    assert report["baselines"]["rank_bm25"]["mrr@10"] == pytest.approx(1.0)
    assert report["baselines"]["langchain_ensemble"]["mrr@10"] == pytest.approx(1.0)
    assert report["ratios"]["hybrid_ndcg_vs_langchain"] == pytest.approx(1.0)
    assert report["index"]["chunks"] == 4 and report["index"]["windows"] >= 4
    assert report["index"]["index_seconds"] >= 0


def test_cli_writes_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    dataset = write_dataset(tmp_path / "tiny")
    output = tmp_path / "report.json"
    assert main(["bench", "beir", str(dataset), "--no-baselines", "--output", str(output)]) == 0
    assert set(json.loads(output.read_text())["modes"]) == {"vector", "keyword", "hybrid"}


def test_not_a_dataset_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not a BEIR dataset"):
        load_beir(tmp_path, "test")


def test_subsample_keeps_every_judged_document_and_is_stable() -> None:
    from citewise.evaluation.beir import subsample_corpus

    corpus = {f"d{i}": ("t", "x") for i in range(50)}
    qrels = {"q": {"d3": 1, "d40": 1, "missing": 1}}
    sample = subsample_corpus(corpus, qrels, 10)
    assert len(sample) == 10 and {"d3", "d40"} <= set(sample)
    assert sample == subsample_corpus(corpus, qrels, 10)


def test_missing_baseline_packages_fail_before_any_embedding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citewise.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "rank_bm25", None)  # as if the bench extra were missing
    with pytest.raises(MissingExtraError, match=r"citewise\[bench\]"):
        # No dataset at all: the check must come before the corpus is even read.
        run_beir_benchmark(
            tmp_path / "absent", settings=Settings(home=tmp_path), embedder_name="minilm"
        )
    assert not (tmp_path / "embedding-cache.sqlite").exists()


def test_percentiles_keep_microseconds_and_two_decimals_above_a_millisecond() -> None:
    # A matrix product over a tiny index takes a few microseconds: a figure, not 0.0.
    assert _percentiles([3e-6, 4e-6, 5e-6]) == {"p50_ms": 0.004, "p95_ms": 0.004}
    assert _percentiles([0.0123456])["p50_ms"] == 12.35
    assert _percentiles([0.000123456])["p50_ms"] == 0.123
