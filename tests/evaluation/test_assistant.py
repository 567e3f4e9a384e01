"""Full evaluation with a scripted model: the checks pass and fail for the right reasons."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from citewise.evaluation.assistant import evaluate_assistant, planner_figures
from citewise.evaluation.cases import load_cases
from citewise.evaluation.harness import run_retrieval_eval
from citewise.kb import KnowledgeBase
from citewise.testing import ScriptedCall, ScriptedChatModel, script

from ..conftest import SHARED_DATA, require

CASES = SHARED_DATA / "lgos-dev-cases.json"


def case_aware_plan(call: ScriptedCall) -> dict[str, Any]:
    """Plans as a good planner would for the dev cases: no search for chat, else the question."""
    question = call.last.lower()
    if question in {"hello!", "help"} or "weather" in question:
        return {"needs_docs": False, "queries": []}
    if " and how " in question:
        first, second = question.split(" and how ", 1)
        return {"needs_docs": True, "queries": [first, "how " + second]}
    return {"needs_docs": True, "queries": [call.last]}


def case_aware_answer(call: ScriptedCall) -> str:
    """Asks back for a message too vague to act on, else points at the docs."""
    question = call.last.rsplit("</documentation>", 1)[-1].strip().lower()
    return "What do you need help with?" if question.endswith("help") else "See the docs."


def test_dev_cases_pass_with_a_planner_that_plans_well(lgos_kb: KnowledgeBase) -> None:
    cases = load_cases(require(CASES))
    model = ScriptedChatModel(reply=script(plan=case_aware_plan, answer=case_aware_answer))
    outcomes = asyncio.run(evaluate_assistant(cases, lgos_kb.with_model(model)))
    assert [o.case.id for o in outcomes if not o.passed] == []
    assert planner_figures(outcomes)["recall@10"] == 1.0


def test_a_planner_that_always_searches_fails_the_chat_cases(lgos_kb: KnowledgeBase) -> None:
    cases = [c for c in load_cases(require(CASES)) if c.id in {"dev-hello", "dev-install"}]
    kb = lgos_kb.with_model(ScriptedChatModel(reply=script(answer="Hi.")))
    outcomes = {o.case.id: o for o in asyncio.run(evaluate_assistant(cases, kb))}
    assert outcomes["dev-install"].passed
    assert not outcomes["dev-hello"].passed
    assert "needs no search" in outcomes["dev-hello"].failures[0]
    # The deterministic shape check fails it too, without a judge.
    checks = {c.name: c for c in outcomes["dev-hello"].checks}
    assert checks["searched"].passed is False
    assert checks["shape"].passed is False and "searched" in checks["shape"].detail


def test_a_vague_message_answered_instead_of_asked_fails_the_shape(
    lgos_kb: KnowledgeBase,
) -> None:
    cases = [c for c in load_cases(require(CASES)) if c.id == "dev-vague"]
    kb = lgos_kb.with_model(ScriptedChatModel(reply=script(plan=case_aware_plan, answer="Ok.")))
    (outcome,) = asyncio.run(evaluate_assistant(cases, kb))
    assert not outcome.passed
    assert outcome.failures == ["clarify: asks no question (no '?')"]


def shape_judge(call: ScriptedCall) -> dict[str, Any]:
    if call.kind == "GroundedVerdict":
        return {"grounded": "yes", "offending": []}
    return {"passed": "no", "reason": "not small talk"}


def test_a_failing_judge_verdict_fails_the_case_when_asked(lgos_kb: KnowledgeBase) -> None:
    cases = [c for c in load_cases(require(CASES)) if c.id == "dev-hello"]
    model = ScriptedChatModel(reply=script(plan=case_aware_plan, answer="Here is a poem."))
    judge = ScriptedChatModel(reply=shape_judge)
    kb = lgos_kb.with_model(model)
    (outcome,) = asyncio.run(evaluate_assistant(cases, kb, judge=judge, fail_on_judge=True))
    assert outcome.failures == ["reply shape (small_talk): not small talk"]
    assert {c.name: c.passed for c in outcome.checks}["shape"] is True  # no rule is broken
    assert "Here is a poem." in judge.calls[0].last
    # Without fail_on_judge the verdict is reported and the case passes.
    (reported,) = asyncio.run(evaluate_assistant(cases, kb, judge=judge))
    assert reported.passed
    assert reported.judge_failures == ["reply shape (small_talk): not small talk"]


def test_retrieval_only_with_a_model_adds_the_planner_figure(lgos_kb: KnowledgeBase) -> None:
    model = ScriptedChatModel(reply=script(plan=case_aware_plan))
    outcome = run_retrieval_eval(require(CASES), lgos_kb, modes=["hybrid"], model=model)
    planner = outcome.results["modes"]["planner"]["figures"]
    assert planner["recall@10"] == 1.0
    assert all(call.kind == "Plan" for call in model.calls)


def test_a_failed_plan_searches_the_message_as_written_and_is_counted(
    lgos_kb: KnowledgeBase,
) -> None:
    # An invalid Plan reply (a weak model's) must not end the run: the workflow's fallback.
    def broken_for_questions(call: ScriptedCall) -> dict[str, Any]:
        plan = case_aware_plan(call)
        return {"needs_docs": "perhaps", "queries": 7} if plan["needs_docs"] else plan

    model = ScriptedChatModel(reply=script(plan=broken_for_questions))
    outcome = run_retrieval_eval(require(CASES), lgos_kb, modes=["hybrid"], model=model)
    failed = outcome.results["planner"]["failed_plans"]
    searched = [c.id for c in load_cases(require(CASES)) if c.parts]
    assert searched and set(searched) <= set(failed)
    assert all("Plan reply is not valid" in why for why in failed.values())
    # The message as written still finds the expected sections.
    assert outcome.results["modes"]["planner"]["figures"]["recall@10"] > 0.5


def test_a_cases_settings_are_its_search_options(lgos_kb: KnowledgeBase) -> None:
    (case,) = [c for c in load_cases(require(CASES)) if c.id == "dev-install"]
    narrow = replace(case, settings={"scope": "all", "top_k": 2})
    model = ScriptedChatModel(reply=script(answer="See the docs."))
    kb = lgos_kb.with_model(model)
    (wide_outcome, narrow_outcome) = asyncio.run(evaluate_assistant([case, narrow], kb))
    assert len(narrow_outcome.answers[0].hits) == 2
    assert len(wide_outcome.answers[0].hits) > 2
