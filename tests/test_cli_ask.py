"""`citewise ask` with a chat model: streamed answer, status lines, sources, JSON, history."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citewise.cli import NO_MODEL_HINT, main
from citewise.testing import OpenAIStub, StubReply

from .conftest import LGOS_SITE, LGOS_VERSION

BASE = f"{LGOS_SITE}{LGOS_VERSION}/"
QUESTION = "How do I add API key authentication?"
SECTION_URL = re.compile(r'<section url="([^"]+)"')


def endpoint(body: dict[str, Any]) -> StubReply:
    """Plans the question as its own query, grades yes, and cites the first section shown."""
    tools = [tool["function"]["name"] for tool in body.get("tools", [])]
    if tools == ["Plan"]:
        question = body["messages"][-1]["content"]
        return StubReply(tool_call=("Plan", {"needs_docs": True, "queries": [question]}))
    if tools == ["Grade"]:
        return StubReply(tool_call=("Grade", {"relevant": "yes"}))
    url = SECTION_URL.findall(body["messages"][-1]["content"])[0]
    return StubReply(content=f"Add a key check ([Authentication]({url})).")


@pytest.fixture
def stub(lgos_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    with OpenAIStub(endpoint) as server:
        monkeypatch.setenv("CITEWISE_HOME", str(lgos_home))
        monkeypatch.setenv("CITEWISE_LLM_MODEL", "stub-model")
        monkeypatch.setenv("CITEWISE_LLM_BASE_URL", server.base_url)
        monkeypatch.delenv("CITEWISE_LLM_API_KEY", raising=False)
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
    assert main(["ask", QUESTION, "--kb", "lgos", "--json", "-k", "3"]) == 0
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


def test_ask_sends_earlier_turns_from_a_history_file(
    stub: OpenAIStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "history.json"
    turns = [
        {"role": "user", "content": "How do I run the demo stack with Docker?"},
        {"role": "assistant", "content": "Use Docker Compose."},
    ]
    history.write_text(json.dumps(turns))
    assert (
        main(["ask", "Which services does it start?", "--kb", "lgos", "--history", str(history)])
        == 0
    )
    plan_messages = stub.requests[0]["messages"]
    assert [m["role"] for m in plan_messages] == ["system", "user", "assistant", "user"]
    assert plan_messages[1]["content"] == turns[0]["content"]


def test_a_malformed_history_file_is_one_line_error(
    stub: OpenAIStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "history.json"
    history.write_text('{"role": "user"}')
    assert main(["ask", QUESTION, "--kb", "lgos", "--history", str(history)]) == 1
    err = capsys.readouterr().err
    assert "--history" in err and len(err.strip().splitlines()) == 1
    assert stub.requests == []


def test_without_a_model_ask_says_how_to_configure_one(
    lgos_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(lgos_home))
    for name in ("CITEWISE_LLM_MODEL", "CITEWISE_LLM_GGUF"):
        monkeypatch.delenv(name, raising=False)
    assert main(["ask", QUESTION, "--kb", "lgos"]) == 0
    out, err = capsys.readouterr()
    assert err.strip() == NO_MODEL_HINT and "CITEWISE_LLM_MODEL" in err
    assert out.startswith("*Extractive answer")
