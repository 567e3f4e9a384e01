"""The documented endpoint command (five runs over the dev cases against a scripted
OpenAI-compatible server on 127.0.0.1) and replaying its planner queries with no model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from citewise.cli import main
from citewise.config import Settings
from citewise.errors import ConfigurationError, SourceError
from citewise.evaluation.cases import load_cases
from citewise.evaluation.replay import available_modes, load_queries
from citewise.llamacpp import default_threads
from citewise.testing import OpenAIStub, StubReply

from ..conftest import SHARED_DATA, require

CASES = SHARED_DATA / "lgos-dev-cases.json"
CHAT = {"hello!", "help", "what is the weather in paris today?"}


def endpoint(body: dict[str, Any]) -> StubReply:
    """A planner that skips chat and searches the rest as written; answers that ask back."""
    tool = body["tools"][0]["function"]["name"] if body.get("tools") else None
    last = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    if tool == "Plan":
        chat = last.strip().lower() in CHAT
        plan = {"needs_docs": not chat, "queries": [] if chat else [last]}
        return StubReply(tool_call=("Plan", plan))
    if tool == "Verdict":
        return StubReply(tool_call=("Verdict", {"passed": "yes", "reason": "fine"}))
    if tool == "GroundedVerdict":
        return StubReply(tool_call=("GroundedVerdict", {"grounded": "yes", "offending": []}))
    return StubReply(content="What exactly do you need?" if "help" in last[-10:] else "Hi.")


def test_five_runs_against_an_endpoint_then_a_replay_without_a_model(
    lgos_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(lgos_home))
    for name in ("CITEWISE_LLM_MODEL", "CITEWISE_LLM_BASE_URL", "CITEWISE_LLM_GGUF"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "out"
    with OpenAIStub(endpoint) as stub:
        argv = ["eval", str(require(CASES)), "--kb", "lgos", "--runs", "5",
                "--endpoint", stub.base_url, "--model", "m", "--judge-model", "m",
                "--output", str(out)]  # fmt: skip
        assert main(argv) == 0
    plans = [
        b for b in stub.requests if b.get("tools") and b["tools"][0]["function"]["name"] == "Plan"
    ]
    assert len(plans) == 5 * 10
    results = json.loads((out / "results.json").read_text())
    checks = results["checks"]
    assert checks["searched"]["applicable"] == 10 and checks["searched"]["failed"] == 0
    assert checks["part"]["applicable"] == 8  # parts of the seven cases with parts
    assert checks["shape"]["applicable"] == 3 and checks["shape"]["failed"] == 0
    assert results["checks_per_run"]["searched"]["applicable"] == 50
    assert checks["judge_grounded"]["passed"] == 10
    assert results["planner"]["searches_skipped"] == 0
    assert results["planner"]["needless_searches"] == 0
    first = results["cases"][0]
    assert len(first["runs"]) == 5 and set(first["runs"][0]["checks"]) >= {"searched", "part_0"}
    # The sections the answer was written from, to read it against them later.
    assert first["sections"] and all(s.startswith("https://") for s in first["sections"])
    assert results["provenance"]["endpoint"] == stub.base_url
    report = (out / "report.md").read_text()
    assert "| searched | structural | 10 | 0 | 1.000 | 1.000 |" in report

    header, sets = load_queries(out / "queries.json")
    assert header["model"] == "m" and len(sets["dev-install"].runs) == 5
    capsys.readouterr()
    # The replay loads no model: the endpoint is gone and none is configured.
    replay = ["eval", str(CASES), "--kb", "lgos", "--replay", str(out / "queries.json"),
              "--output", str(tmp_path / "replay")]  # fmt: skip
    assert main(replay) == 0
    printed = capsys.readouterr().out
    assert "hybrid" in printed and "vector" in printed and "keyword" in printed
    replayed = json.loads((tmp_path / "replay" / "results.json").read_text())
    assert set(replayed["modes"]) == set(available_modes(False))
    assert replayed["modes"]["hybrid"]["figures"]["recall@10"] == results["figures"]["recall@10"]


def test_the_endpoint_needs_a_model_name(tmp_path: Path, capsys: Any) -> None:
    assert main(["eval", str(tmp_path / "c.json"), "--endpoint", "http://127.0.0.1:9/v1"]) != 0
    assert "--endpoint needs --model" in capsys.readouterr().err


def test_a_bad_queries_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "q.json"
    bad.write_text(json.dumps({"cases": []}))
    with pytest.raises(SourceError, match="not a planner queries file"):
        load_queries(bad)
    bad.write_text(json.dumps({"format": "citewise-planner-queries/1", "cases": [{"case": 1}]}))
    with pytest.raises(SourceError, match="entry 0"):
        load_queries(bad)


def test_anchors_must_name_one_list_per_part(tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    case = {"id": "a", "messages": [{"role": "user", "content": "q"}], "parts": [["api/"]]}
    cases.write_text(json.dumps([case | {"anchors": [["api/#x"], ["api/#y"]]}]))
    with pytest.raises(SourceError, match="anchors"):
        load_cases(cases)
    cases.write_text(json.dumps([case | {"anchors": [["api/#requests.get"]]}]))
    (loaded,) = load_cases(cases)
    assert loaded.targets == (("api/#requests.get",),) and loaded.parts == (("api/",),)


def test_thread_settings_are_read_and_checked() -> None:
    settings = Settings.from_env({"CITEWISE_LLM_THREADS": "1", "CITEWISE_LLM_BATCH_THREADS": "2"})
    assert (settings.llm_threads, settings.llm_batch_threads) == (1, 2)
    assert Settings.from_env({}).llm_threads is None
    with pytest.raises(ConfigurationError, match="CITEWISE_LLM_THREADS"):
        Settings.from_env({"CITEWISE_LLM_THREADS": "two"})
    assert default_threads(2) == 1 and default_threads(1) == 1 and default_threads(16) == 8
