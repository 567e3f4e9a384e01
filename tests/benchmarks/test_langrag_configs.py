"""`python -m benchmarks.langrag CONFIG`: LangRAG's own configuration files run as written on the
set each was written for, reported beside the figures LangRAG published."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.langrag import main
from benchmarks.langrag_configs import experiment, paired_set
from citewise.errors import SourceError

from ..conftest import SHARED_DATA, require

CONFIGS = SHARED_DATA / "langrag-benchmarks" / "configs"


def bench(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main([*argv, "--embedder", "minilm", "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_an_experiment_keeps_langrags_sizes_and_names_what_it_cannot_honour() -> None:
    run = experiment(
        {"name": "pc", "parser_mode": "preparsed",
         "creation_settings": {"index_type": "parent_child", "parent_chunk_size": 320,
                               "child_chunk_size": 110, "overlap": 25},
         "retrieval_settings": {"search_type": "hybrid", "vector_weight": 0.65, "top_k": 5,
                                "query_rewrite": "multi_query",
                                "rewrite_llm_model_uuid": "local-fake-llm"}}
    )  # fmt: skip
    strategy = run.strategy
    assert (strategy.name, strategy.parent_chars, strategy.child_chars) == (
        "parent_child",
        320,
        110,
    )
    assert strategy.overlap == 25 and run.needs_model
    assert run.options == {
        "search_type": "hybrid", "top_k": 5, "query_rewrite": "multi_query", "vector_weight": 0.65,
    }  # fmt: skip
    assert not any("vector_weight" in note for note in run.notes)
    assert any("LangRAG's model 'local-fake-llm'" in note for note in run.notes)
    with pytest.raises(SourceError, match="index_type"):
        experiment({"name": "x", "creation_settings": {"index_type": "graph"}})


def test_the_hard_configuration_runs_as_written_beside_the_published_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = require(CONFIGS / "hard_retrieval.json")
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path))
    monkeypatch.delenv("CITEWISE_LLM_MODEL", raising=False)
    monkeypatch.delenv("CITEWISE_LLM_GGUF", raising=False)
    (report,) = bench(capsys, str(config))["configs"]
    assert (report["config"], report["dataset"], report["ks"]) == (
        "hard_retrieval_v1", "hard_multihop_zh", [1, 3, 5],
    )  # fmt: skip
    experiments = report["experiments"]
    vector = experiments["chunk_vector_hard"]
    assert vector["as_run"] == {
        "strategy": "section", "parent_chars": 220, "child_chars": 400, "chunk_overlap": 30,
        "parser": "preparsed sections", "search_type": "vector", "top_k": 5,
        "query_rewrite": "off",
    }  # fmt: skip
    assert vector["published"] == {"hit@3": 0.80, "all_relevant@3": 0.50, "ndcg@3": 0.60}
    assert set(vector["citewise"]["minilm"]) >= {"hit@3", "all_relevant@3", "ndcg@3", "ndcg@5"}
    assert experiments["parent_child_hybrid_hard"]["published"] is None  # none was published
    assert "chat model" in experiments["chunk_multi_query_hard"]["skipped"]
    assert "minilm" not in experiments["chunk_multi_query_hard"]["citewise"]


def test_a_configuration_of_unknown_pairing_needs_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="--dataset"):
        paired_set(tmp_path / "mine.json")
    assert paired_set(CONFIGS / "parser_compare.json").name == "parser_compare_zh.json"


def test_markdown_report_puts_langrag_and_citewise_rows_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = require(CONFIGS / "parser_compare.json")
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path))
    assert main([str(config), "--embedder", "minilm"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### parser_compare.json on parser_compare_zh (3 documents, 3 queries)")
    assert "| general_parsers_parent_child | citewise minilm |" in out
    assert "overlap applies between parents" in out
