"""The grounded judge: it sees what the answer call saw, its verdict is parsed and reported."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from citewise.cli import main
from citewise.evaluation.assistant import evaluate_assistant
from citewise.evaluation.cases import load_cases
from citewise.evaluation.harness import run_assistant_eval
from citewise.evaluation.judge import Judgement, agreement, agreement_markdown
from citewise.kb import KnowledgeBase
from citewise.testing import OpenAIStub, ScriptedCall, ScriptedChatModel, StubReply, script

from ..conftest import SHARED_DATA, require
from .test_assistant import case_aware_plan

CASES = SHARED_DATA / "lgos-dev-cases.json"
FABRICATED = "Set `LGOS_MAGIC_TOKEN=1` and run `lgos serve --turbo`."


def grounding_judge(call: ScriptedCall) -> dict[str, Any]:
    """Fails replies that mention the planted names, naming one span it invents itself."""
    if call.kind == "Verdict":
        return {"passed": "yes", "reason": "fine"}
    if "LGOS_MAGIC_TOKEN" in call.last.split("<reply>", 1)[1]:
        return {
            "grounded": "no",
            "offending": [
                {"span": "LGOS_MAGIC_TOKEN=1", "kind": "setting", "reason": "not in sections"},
                {"span": "--warp-speed", "kind": "command", "reason": "a span not in the reply"},
            ],
        }
    return {"grounded": "yes", "offending": []}


def answer_calls(model: ScriptedChatModel) -> list[ScriptedCall]:
    return [call for call in model.calls if call.kind == "answer"]


def test_the_judge_sees_the_answer_calls_sections_and_fails_a_fabrication(
    lgos_kb: KnowledgeBase,
) -> None:
    cases = [c for c in load_cases(require(CASES)) if c.id == "dev-install"]
    model = ScriptedChatModel(reply=script(plan=case_aware_plan, answer=FABRICATED))
    judge = ScriptedChatModel(reply=grounding_judge)
    (outcome,) = asyncio.run(evaluate_assistant(cases, lgos_kb.with_model(model), judge=judge))

    (answered,) = answer_calls(model)
    documentation = answered.last.split("</documentation>", 1)[0] + "</documentation>"
    judged = next(call for call in judge.calls if call.kind == "GroundedVerdict")
    assert documentation.startswith("<documentation>\n<section url=")
    assert documentation in judged.last
    assert FABRICATED in judged.last
    assert judged.temperature == 0.0

    assert outcome.grounding is not None and not outcome.grounding.passed
    assert [o.span for o in outcome.grounding.offending] == ["LGOS_MAGIC_TOKEN=1"]
    assert [o.span for o in outcome.grounding.unquoted] == ["--warp-speed"]
    assert outcome.judge_failures == ["not grounded: setting 'LGOS_MAGIC_TOKEN=1'"]
    # The judge reports; the case fails on the deterministic check alone, which agrees.
    assert outcome.check_ok is False
    # Names are matched whole: ``serve`` is not held by ``langgraph-openai-serve``, nor
    # ``lgos`` by ``LGOS_…`` names.
    assert outcome.failures == [
        "unsupported by the sections: LGOS_MAGIC_TOKEN, lgos, serve, --turbo"
    ]


def test_the_judge_sees_the_earlier_turns_of_a_follow_up(lgos_kb: KnowledgeBase) -> None:
    cases = [c for c in load_cases(require(CASES)) if c.id == "dev-followup"]
    model = ScriptedChatModel(reply=script(answer="It starts the demo services."))
    judge = ScriptedChatModel(reply=grounding_judge)
    (outcome,) = asyncio.run(evaluate_assistant(cases, lgos_kb.with_model(model), judge=judge))
    judged = next(call for call in judge.calls if call.kind == "GroundedVerdict")
    earlier = cases[0].messages[1]["content"]
    assert f"<conversation>\nuser: {cases[0].messages[0]['content']}" in judged.last
    assert f"ai: {earlier}" in judged.last
    assert outcome.grounding is not None and outcome.grounding.passed


def test_a_judge_without_a_valid_verdict_is_an_error_not_a_failure(
    lgos_kb: KnowledgeBase,
) -> None:
    cases = [c for c in load_cases(require(CASES)) if c.id == "dev-install"]
    model = ScriptedChatModel(reply=script(plan=case_aware_plan, answer="See the docs."))
    judge = ScriptedChatModel(reply=lambda call: {"nonsense": True})
    kb = lgos_kb.with_model(model)
    (outcome,) = asyncio.run(evaluate_assistant(cases, kb, judge=judge, fail_on_judge=True))
    assert outcome.grounding is not None and outcome.grounding.error
    assert outcome.failures == []
    assert "judge error" in outcome.judged[-1]


def test_the_report_has_a_row_per_case_and_the_confusion_table(
    lgos_kb: KnowledgeBase, tmp_path: Path
) -> None:
    cases = [
        c
        for c in json.loads(require(CASES).read_text())
        if c["id"] in {"dev-install", "dev-errors", "dev-hello"}
    ]
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps(cases))

    def answer(call: ScriptedCall) -> str:
        return FABRICATED if "install" in call.last else "See the docs."

    model = ScriptedChatModel(reply=script(plan=case_aware_plan, answer=answer))
    judge = ScriptedChatModel(reply=grounding_judge)
    outcome = run_assistant_eval(
        cases_file, lgos_kb, model, judge=judge, out_dir=tmp_path / "out", fail_on_judge=True
    )
    assert outcome.failed_cases == ["dev-install"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| dev-install |" in report and "LGOS\\_MAGIC\\_TOKEN" not in report
    assert "Set `LGOS_MAGIC_TOKEN=1`" in report
    assert "## Grounded judge against the deterministic check" in report
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["provenance"]["fail_on_judge"] is True
    by_case = {c["case"]: c for c in results["cases"]}
    assert by_case["dev-install"]["grounding_judge"]["offending"][0]["kind"] == "setting"


def test_a_no_that_quotes_nothing_from_the_reply_does_not_fail_it(
    lgos_kb: KnowledgeBase,
) -> None:
    cases = [c for c in load_cases(require(CASES)) if c.id == "dev-install"]
    model = ScriptedChatModel(reply=script(plan=case_aware_plan, answer="See the docs."))

    def bare_no(call: ScriptedCall) -> dict[str, Any]:
        if call.kind == "Verdict":
            return {"passed": "yes"}
        return {"grounded": "no", "offending": [{"span": "pip install x", "kind": "command"}]}

    judge = ScriptedChatModel(reply=bare_no)
    kb = lgos_kb.with_model(model)
    (outcome,) = asyncio.run(evaluate_assistant(cases, kb, judge=judge, fail_on_judge=True))
    assert outcome.grounding is not None and outcome.grounding.unsubstantiated
    assert outcome.grounding.passed and outcome.passed
    assert [o.span for o in outcome.grounding.unquoted] == ["pip install x"]
    assert "quoted no span" in outcome.judged[-1]


def test_agreement_counts_only_answers_both_judged() -> None:
    good, bad = Judgement(True, ()), Judgement(False, ())
    broken = Judgement(True, (), error="no verdict")
    table = agreement(
        [(True, good), (True, bad), (False, bad), (False, bad), (None, good), (True, broken)]
    )
    assert table == {
        "check_pass/judge_pass": 1,
        "check_pass/judge_fail": 1,
        "check_fail/judge_pass": 0,
        "check_fail/judge_fail": 2,
    }
    assert "Agreement: 3/4 answers (75%)." in agreement_markdown(table)


def test_the_cli_judges_over_an_endpoint_and_fails_only_when_asked(
    lgos_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [c for c in json.loads(require(CASES).read_text()) if c["id"] == "dev-install"]
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps(cases))

    def endpoint(body: dict[str, Any]) -> StubReply:
        tool = body["tools"][0]["function"]["name"] if body.get("tools") else None
        if tool == "Plan":
            return StubReply(tool_call=("Plan", {"needs_docs": True, "queries": ["install"]}))
        if tool == "Verdict":
            return StubReply(tool_call=("Verdict", {"passed": "yes", "reason": "answers"}))
        if tool == "GroundedVerdict":
            assert body["model"] == "judge-m" and body["temperature"] == 0.0
            verdict = {"grounded": "no", "offending": [{"span": "docs", "kind": "other"}]}
            return StubReply(tool_call=("GroundedVerdict", verdict))
        return StubReply(content="See the docs.")

    with OpenAIStub(endpoint) as stub:
        monkeypatch.setenv("CITEWISE_HOME", str(lgos_home))
        monkeypatch.setenv("CITEWISE_LLM_BASE_URL", stub.base_url)
        monkeypatch.setenv("CITEWISE_LLM_MODEL", "answer-m")
        out = tmp_path / "out"
        argv = ["eval", str(cases_file), "--kb", "lgos", "--judge-model", "judge-m"]
        assert main([*argv, "--max-failures", "0", "--output", str(out)]) == 0
        assert main([*argv, "--max-failures", "0", "--fail-on-judge"]) == 1
    models = {body["model"] for body in stub.requests}
    assert models == {"answer-m", "judge-m"}
    report = (out / "report.md").read_text()
    assert "| check pass | 0 | 1 |" in report
    assert "judge: judge-m" in report
