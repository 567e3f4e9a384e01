"""Retrieval-only evaluation: ranks, recall@k and MRR, and `citewise eval` on the dev cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.cli import main
from citewise.evaluation.retrieval import first_answering_rank, recall_and_mrr
from citewise.models import Chunk, Hit

from ..conftest import SHARED_DATA, require


def hit(page: str) -> Hit:
    chunk = Chunk("id", "doc", 0, 0, "text", "t", ("t",), "", f"https://x/{page}", page)
    return Hit(chunk, 1.0, ("dense",))


def test_first_answering_rank_counts_sections_not_pages() -> None:
    hits = [hit("a/"), hit("a/"), hit("b/"), hit("c/")]
    assert first_answering_rank(hits, ["c/", "b/"]) == 3
    assert first_answering_rank(hits, ["z/"]) is None


def test_recall_and_mrr_hand_computed() -> None:
    figures = recall_and_mrr([1, 2, 4, None])
    assert figures["recall@1"] == 0.25
    assert figures["recall@3"] == 0.5
    assert figures["recall@5"] == 0.75
    assert figures["recall@10"] == 0.75
    assert figures["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 4) / 4)


def test_eval_cli_on_the_dev_cases_finds_every_part_and_writes_reports(
    lgos_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(lgos_home))
    cases = require(SHARED_DATA / "lgos-dev-cases.json")
    out = tmp_path / "eval"
    code = main(["eval", str(cases), "--kb", "lgos", "--retrieval-only", "--output", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "failed (hybrid, not in top 10): none" in printed
    results = json.loads((out / "results.json").read_text())
    assert set(results["modes"]) == {"vector", "keyword", "hybrid"}
    assert results["modes"]["hybrid"]["figures"]["recall@10"] == 1.0
    assert len(results["provenance"]["cases_sha256"]) == 64
    assert "| hybrid |" in (out / "report.md").read_text()
    assert (out / "recall.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_full_eval_without_a_model_says_what_to_do(
    lgos_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(lgos_home))
    cases = require(SHARED_DATA / "lgos-dev-cases.json")
    assert main(["eval", str(cases), "--kb", "lgos"]) == 1
    assert "--retrieval-only" in capsys.readouterr().err
