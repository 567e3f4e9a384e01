"""`citewise search` and `citewise ask`: JSON shapes, options, scopes, errors, and answers
streamed from a chat model (a scripted OpenAI-compatible endpoint).

Every option reaches the knowledge base as an override of its own defaults, so a knowledge
base created with ``--top-k 1 --search-type full_text`` answers with one BM25 hit unless a
flag says otherwise; the spellings of earlier releases still work, with a warning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from citewise.cli import NO_MODEL_HINT, main
from citewise.kb import KnowledgeBase
from citewise.testing import OpenAIStub, StubReply
from tests.conftest import LGOS, require

from .support import BASE, fail, run, run_json

QUESTION = "How do I add API key authentication?"
SECTION_URL = re.compile(r'<section url="([^"]+)"')


# -- the LGOS docs --------------------------------------------------------------------------


def test_search_json_has_the_documented_fields_best_first(
    lgos_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hits = run_json(capsys, "search", "How do I put LGOS behind LiteLLM?", "--kb", "lgos", "--json")
    assert isinstance(hits, list) and len(hits) == 10
    assert set(hits[0]) >= {"url", "page", "heading_path", "score", "text", "rankers"}
    assert hits[0]["page"] == "how-to-guides/openai-proxies/"
    assert hits[0]["url"].startswith(BASE + "how-to-guides/openai-proxies/")
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    rankers = {"dense", "keyword", "name", "proximity"}
    assert all(set(hit["rankers"]) <= rankers and hit["rankers"] for hit in hits)


def test_search_prints_ranked_sections_with_their_links(
    lgos_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = run(capsys, "search", "LiteLLM proxy", "--kb", "lgos", "--top-k", "2").splitlines()
    assert len(lines) == 4
    assert lines[0].startswith(" 1. ") and "[" in lines[0] and lines[1].startswith(f"    {BASE}")


@pytest.mark.parametrize(("search_type", "ranker"), [("vector", "dense"), ("full_text", "keyword")])
def test_single_ranker_search_types(
    lgos_env: Path, capsys: pytest.CaptureFixture[str], search_type: str, ranker: str
) -> None:
    hits = run_json(capsys, "search", "API key authentication", "--kb", "lgos",
                    "--search-type", search_type, "--top-k", "3", "--json")  # fmt: skip
    assert isinstance(hits, list) and len(hits) == 3
    assert all(hit["rankers"] == [ranker] for hit in hits)


def test_scope_filters_the_search(lgos_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hits = run_json(capsys, "search", "settings", "--kb", "lgos", "--scope", "demo", "--json")
    assert isinstance(hits, list) and hits
    assert all(hit["page"].startswith("demo/") for hit in hits)


def test_page_prefix_and_doc_ids_filter_the_search(
    lgos_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hits = run_json(capsys, "search", "settings", "--kb", "lgos", "--page-prefix", "demo/",
                    "--json")  # fmt: skip
    assert hits and all(hit["page"].startswith("demo/") for hit in hits)
    doc_id = hits[0]["doc_id"]
    only = run_json(capsys, "search", "settings", "--kb", "lgos", "--doc-id", doc_id, "--json")
    assert only and {hit["doc_id"] for hit in only} == {doc_id}


def test_ask_quotes_and_cites_sections(lgos_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", QUESTION, "--kb", "lgos"]) == 0
    out, err = capsys.readouterr()
    assert err.strip() == NO_MODEL_HINT and "CITEWISE_LLM_MODEL" in err
    assert out.startswith("*Extractive answer")
    assert "Sources:" in out
    assert BASE + "how-to-guides/authentication/" in out


def test_ask_json_annotations_point_at_their_links(
    lgos_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = run_json(capsys, "ask", QUESTION, "--kb", "lgos", "--json")
    assert isinstance(answer, dict) and answer["annotations"]
    assert answer["kind"] == "extractive" and set(answer) >= {"text", "queries", "hits"}
    for note in answer["annotations"]:
        span = answer["text"][note["start_index"] : note["end_index"]]
        assert span.endswith(f"({note['url']})") and note["type"] == "url_citation"


def test_dev_cases_are_all_found_in_the_top_ten(lgos_kb: KnowledgeBase) -> None:
    cases = json.loads(require(LGOS.parent / "lgos-dev-cases.json").read_text())
    for case in cases:
        question = case["messages"][-1]["content"]
        pages = [hit.chunk.page for hit in lgos_kb.search(question, top_k=10)]
        for part in case["parts"]:
            assert set(part) & set(pages), (case["id"], part, pages)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "x", "--kb", "missing"], "unknown knowledge base 'missing'"),
        (["ask", "x", "--kb", "missing"], "unknown knowledge base 'missing'"),
        (["search", "x", "--kb", "lgos", "--scope", "nope"], "unknown scope 'nope'"),
        (["search", "x", "--kb", "lgos", "--top-k", "0"], "--top-k 0: "),
        (["ask", "x", "--kb", "lgos", "--context-window", "9"], "--context-window 9: "),
    ],
)
def test_errors_are_one_line_without_traceback(
    lgos_env: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert message in fail(capsys, *argv)


# -- a knowledge base's own defaults, and the flags that override them ----------------------


@pytest.fixture
def team(home: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Knowledge base ``team``: one BM25 hit by default, four sections about tokens."""
    guide = home / "guide.md"
    bodies = [f"Rotate the API token every {n} days." for n in (30, 60, 90, 120)]
    guide.write_text(
        "# Tokens\n\n" + "".join(f"## Rule {n}\n\n{b}\n\n" for n, b in enumerate(bodies))
    )
    run(capsys, "kb", "create", "team", "--top-k", "1", "--search-type", "full_text")
    run(capsys, "doc", "add", str(guide), "--kb", "team")
    return "team"


def test_kb_defaults_apply_to_search_and_ask(team: str, capsys: pytest.CaptureFixture[str]) -> None:
    hits = run_json(capsys, "search", "API token", "--kb", team, "--json")
    assert len(hits) == 1 and hits[0]["rankers"] == ["keyword"]
    answer = run_json(capsys, "ask", "How often do I rotate the API token?", "--kb", team, "--json")
    assert len(answer["hits"]) == 1 and answer["hits"][0]["rankers"] == ["keyword"]
    kb_hits = run_json(capsys, "kb", "search", team, "API token", "--json")
    assert len(kb_hits) == 1 and kb_hits[0]["rankers"] == ["keyword"]


def test_flags_override_the_kb_defaults(team: str, capsys: pytest.CaptureFixture[str]) -> None:
    hits = run_json(capsys, "search", "API token", "--kb", team, "--top-k", "3", "--json")
    assert len(hits) == 3 and all(hit["rankers"] == ["keyword"] for hit in hits)
    answer = run_json(capsys, "ask", "API token", "--kb", team, "--top-k", "3", "--json")
    assert len(answer["hits"]) == 3
    hybrid = run_json(capsys, "search", "API token", "--kb", team, "--search-type", "hybrid",
                      "--json")  # fmt: skip
    assert len(hybrid) == 1 and "dense" in hybrid[0]["rankers"]


@pytest.mark.parametrize(
    ("flag", "value", "known"),
    [
        ("--rerank", "mine", "off, cross_encoder, llm"),
        ("--query-rewrite", "mine", "off, hyde, multi_query, step_back"),
    ],
)
def test_an_unknown_reranker_or_rewrite_fails_in_one_line_naming_the_known_ones(
    team: str, capsys: pytest.CaptureFixture[str], flag: str, value: str, known: str
) -> None:
    for argv in (["search", "API token", "--kb", team], ["kb", "create", "typo"]):
        assert main([*argv, flag, value]) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert f"'{value}'" in err and f"(known: {known})" in err
    assert main(["kb", "list", "--json"]) == 0
    assert "typo" not in capsys.readouterr().out  # refused before anything was created


# -- answers written by a chat model ----------------------------------------------------------


def endpoint(body: dict[str, Any]) -> StubReply:
    """Plans the question as its own query, grades yes, and cites the first section shown."""
    tools = [tool["function"]["name"] for tool in body.get("tools", [])]
    if tools == ["Plan"]:
        question = body["messages"][-1]["content"]
        return StubReply(tool_call=("Plan", {"needs_docs": True, "queries": [question]}))
    if tools == ["Grade"]:
        return StubReply(tool_call=("Grade", {"relevant": "yes"}))
    if tools == ["search_docs"]:  # citewise-agentic-tools: the model calls the search tool
        question = body["messages"][-1]["content"]
        return StubReply(tool_call=("search_docs", {"query": question}))
    url = SECTION_URL.findall(body["messages"][-1]["content"])[0]
    return StubReply(content=f"Add a key check ([Authentication]({url})).")


@contextmanager
def model_endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    """The scripted endpoint, configured as this test's chat model."""
    with OpenAIStub(endpoint) as server:
        monkeypatch.setenv("CITEWISE_LLM_MODEL", "stub-model")
        monkeypatch.setenv("CITEWISE_LLM_BASE_URL", server.base_url)
        monkeypatch.delenv("CITEWISE_LLM_API_KEY", raising=False)
        yield server


@pytest.fixture
def stub(lgos_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    with model_endpoint(monkeypatch) as server:
        yield server


def test_ask_streams_the_answer_with_statuses_and_numbered_sources(
    stub: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", QUESTION, "--kb", "lgos"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "· Understanding the question",
        f"· Searching the docs: {QUESTION}",
        "· Writing the answer",
    ]
    answer, _, sources = out.partition("\n\nSources:\n")
    assert answer.startswith("Add a key check ([Authentication](" + BASE)
    assert re.match(rf"  \[1\] .+\n      {re.escape(BASE)}\S+\n$", sources)
    assert len(stub.requests) == 2


def test_ask_json_prints_the_final_text_with_its_annotations(
    stub: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", QUESTION, "--kb", "lgos", "--json", "--top-k", "3"]) == 0
    out, _ = capsys.readouterr()
    payload = json.loads(out)
    assert payload["kind"] == "generated" and payload["queries"] == [QUESTION]
    (note,) = payload["annotations"]
    assert note["type"] == "url_citation" and note["url"].startswith(BASE)
    assert payload["text"][note["start_index"] : note["end_index"]].endswith(f"({note['url']})")
    assert 1 <= len(payload["hits"]) <= 3


def test_ask_agentic_grades_before_answering(
    stub: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", QUESTION, "--kb", "lgos", "--model", "citewise-agentic"]) == 0
    _, err = capsys.readouterr()
    assert "· Checking whether the sections answer the question" in err.splitlines()
    assert len(stub.requests) == 3


def test_ask_agentic_tools_searches_by_the_model_s_tool_call(
    stub: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", QUESTION, "--kb", "lgos", "--model", "citewise-agentic-tools"]) == 0
    out, err = capsys.readouterr()
    assert f"· Searching the docs: {QUESTION}" in err.splitlines()
    assert "· Checking whether the sections answer the question" in err.splitlines()
    decide, grade, answer = stub.requests
    assert [tool["function"]["name"] for tool in decide["tools"]] == ["search_docs"]
    assert "query" in decide["tools"][0]["function"]["parameters"]["properties"]
    assert [tool["function"]["name"] for tool in grade["tools"]] == ["Grade"]
    assert "tools" not in answer and out.startswith("Add a key check ([Authentication](")


def test_ask_sends_earlier_turns_from_a_history_file(
    stub: OpenAIStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "history.json"
    turns = [
        {"role": "user", "content": "How do I run the demo stack with Docker?"},
        {"role": "assistant", "content": "Use Docker Compose."},
    ]
    history.write_text(json.dumps(turns))
    run(capsys, "ask", "Which services does it start?", "--kb", "lgos", "--history", str(history))
    plan_messages = stub.requests[0]["messages"]
    assert [m["role"] for m in plan_messages] == ["system", "user", "assistant", "user"]
    assert plan_messages[1]["content"] == turns[0]["content"]


def test_a_malformed_history_file_is_one_line_error(
    stub: OpenAIStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "history.json"
    history.write_text('{"role": "user"}')
    assert "--history" in fail(capsys, "ask", QUESTION, "--kb", "lgos", "--history", str(history))
    assert stub.requests == []


def test_a_streamed_answer_searches_with_the_kb_defaults(
    team: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with model_endpoint(monkeypatch):
        answer = run_json(capsys, "ask", "How often do I rotate the API token?", "--kb", team,
                          "--json")  # fmt: skip
        assert answer["kind"] == "generated"
        assert len(answer["hits"]) == 1 and answer["hits"][0]["rankers"] == ["keyword"]
