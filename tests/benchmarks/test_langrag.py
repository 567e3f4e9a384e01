"""`python -m benchmarks.langrag` on a tiny set written by the test, and on the shared sets'
shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.langrag import document_source, format_report, run_langrag_benchmark, runs
from citewise.config import Settings

from ..conftest import SHARED_DATA, require

TINY = {
    "id": "tiny_v1",
    "documents": [
        {"id": "d_keys", "title": "密钥", "content": "API 密钥放在请求头里发送。",
         "sections": [{"heading": "请求头", "level": 1,
                       "content": "Authorization 请求头携带密钥。"}]},
        {"id": "d_logs", "title": "日志", "content": "每个请求都会记录 request id。"},
        {"id": "d_html", "filename": "x.html", "title": "表格",
         "raw_content": "<html><body><h1>表格</h1><p>表格按行保留。</p></body></html>",
         "content": "表格按行保留。"},
    ],
    "queries": [
        {"id": "q1", "query": "密钥怎么发送？", "relevant_document_ids": ["d_keys"]},
        {"id": "q2", "query": "日志记录什么？", "relevant_document_ids": ["d_logs"]},
        {"id": "q3", "query": "表格怎么保留", "relevant_document_ids": ["d_html"]},
    ],
}  # fmt: skip


def test_documents_become_the_files_a_user_would_upload() -> None:
    markdown = document_source(TINY["documents"][0])  # type: ignore[index]
    assert markdown.doc_id == "d_keys.md"
    assert markdown.text == (
        "# 密钥\n\nAPI 密钥放在请求头里发送。\n\n## 请求头\n\nAuthorization 请求头携带密钥。"
    )
    assert document_source(TINY["documents"][2]).doc_id == "d_html.html"  # type: ignore[index]


def test_without_a_model_the_llm_runs_are_listed_as_skipped() -> None:
    plan, skipped = runs(model_available=False)
    assert all(run.strategy != "qa" and "query_rewrite" not in run.options for run in plan)
    assert any(s.startswith("qa hybrid") for s in skipped)
    assert len(runs(model_available=True)[0]) == len(plan) + len(skipped)


def test_tiny_set_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY, ensure_ascii=False))
    report = run_langrag_benchmark([path], settings=Settings(home=tmp_path), embedders=["minilm"])
    results = report["sets"]["tiny"]["embedders"]["minilm"]
    assert results["section full_text"]["hit@1"] == 1.0
    assert results["section hybrid"]["hit@3"] == 1.0
    assert set(results["section vector"]) >= {"all_relevant@3", "precision@5", "ndcg@5", "mrr@1"}
    table = format_report(report)
    assert "| minilm | section hybrid |" in table and "Skipped:" in table


@pytest.mark.parametrize("name", ["hard_multihop_zh", "mini_zh", "parser_compare_zh"])
def test_shared_sets_load_as_uploads(name: str) -> None:
    path = require(SHARED_DATA / "langrag-benchmarks" / "datasets" / f"{name}.json")
    data = json.loads(path.read_text())
    for doc in data["documents"]:
        assert document_source(doc).doc_id.startswith(doc["id"])
