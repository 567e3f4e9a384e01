"""The check on the LGOS dev cases: grounded answers pass, planted fabrications do not.

Each case runs through citewise-rag on the real index with a scripted model that writes a
paraphrase of the sections that answer it (``tests/data/lgos-dev-answers.json``), and
through the extractive answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from citewise.answering import answer
from citewise.kb import KnowledgeBase
from citewise.models import Answer
from citewise.options import SearchOptions
from citewise.testing import ScriptedChatModel, script

from ..conftest import LGOS_SITE, LGOS_VERSION
from ..graph.test_dev_cases import CASES, CASES_FILE, planned_queries

DOCS = f"{LGOS_SITE}{LGOS_VERSION}/"
ANSWERS: dict[str, str] = {
    key: value.replace("{docs}", DOCS)
    for key, value in json.loads(
        (Path(__file__).parents[1] / "data" / "lgos-dev-answers.json").read_text()
    ).items()
    if not key.startswith("_")
}
SMALL_TALK = "Hello! What would you like to know about the documentation?"
PLANTED = {
    "env var": "Set `LGOS_CACHE_TTL` to tune it.",
    "flag": "Start it with `lgos serve --hot-reload`.",
    "import path": "```python\nfrom langgraph_openai_serve.auth import require_api_key\n```",
    "url": "More at https://lgos.example.com/guide/advanced.",
}
UNSUPPORTED_BLOCKS = {
    "dev-errors": (
        "LGOS returns errors in the OpenAI error shape, so OpenAI clients raise their us…",
    )
}
needs_cases = pytest.mark.skipif(not CASES, reason=f"dev cases not found at {CASES_FILE}")


def written(case: dict[str, Any], kb: KnowledgeBase, text: str) -> Answer:
    queries = planned_queries(case)
    plan = {"needs_docs": bool(queries), "queries": queries}
    model = ScriptedChatModel(reply=script(plan=plan, answer=text))
    scope = case["settings"].get("scope", "all")
    return answer(case["messages"], kb, model, options=SearchOptions(scope=scope))


@needs_cases
@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_the_written_answer_of_each_dev_case_passes(
    case: dict[str, Any], lgos_kb: KnowledgeBase
) -> None:
    assert not case["parts"] or case["id"] in ANSWERS, "every case with parts has an answer"
    result = written(case, lgos_kb, ANSWERS.get(case["id"], SMALL_TALK))

    verification = result.verification
    assert verification is not None, result
    # The errors answer opens with a claim of its own that no retrieved section makes: an
    # unsupported claim fails the check.
    assert verification.unsupported_blocks == UNSUPPORTED_BLOCKS.get(case["id"], ())
    assert verification.ok == (case["id"] not in UNSUPPORTED_BLOCKS), verification
    assert len(verification.citations) == len(result.citations) >= bool(case["parts"])


@needs_cases
@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_the_extractive_answer_of_each_dev_case_passes(
    case: dict[str, Any], lgos_kb: KnowledgeBase
) -> None:
    scope = case["settings"].get("scope", "all")
    result = lgos_kb.ask(case["messages"], scope=scope)

    verification = result.verification
    assert verification is not None, result
    assert not verification.unsupported and not verification.unsupported_blocks, verification
    assert all(c.supported for c in verification.citations), verification
    # A quoted passage keeps the docs' own links (one to another site is grounded by the
    # quote, see quoted_links); any link still flagged is the docs' link, not an invented one.
    quoted = "\n".join(hit.chunk.text for hit in result.hits)
    assert all(link in quoted for link in verification.outside_links), verification


@needs_cases
@pytest.mark.parametrize("kind", PLANTED)
def test_a_fabrication_planted_in_a_dev_answer_is_flagged(
    kind: str, lgos_kb: KnowledgeBase
) -> None:
    case = next(case for case in CASES if case["id"] == "dev-auth-logs")
    result = written(case, lgos_kb, f"{ANSWERS[case['id']]}\n\n{PLANTED[kind]}")

    verification = result.verification
    assert verification is not None and not verification.ok
    expected = {
        "env var": ("LGOS_CACHE_TTL",),
        "flag": ("--hot-reload",),
        "import path": ("langgraph_openai_serve.auth",),
        "url": ("https://lgos.example.com/guide/advanced",),
    }[kind]
    assert set(expected) <= set(verification.unsupported), verification.unsupported


@needs_cases
def test_uncited_claims_of_a_dev_answer_are_attributed(lgos_kb: KnowledgeBase) -> None:
    case = next(case for case in CASES if case["id"] == "dev-settings")
    text = ANSWERS[case["id"]]
    without_links = text.replace(
        f" ([Runtime Settings]({DOCS}tutorials/custom-graphs/#runtime-settings))", ""
    )
    assert "](" not in without_links

    result = written(case, lgos_kb, without_links)

    assert len(result.citations) == 2 and all(c.attributed for c in result.citations)
    first, second = (without_links[c.start_index : c.end_index] for c in result.citations)
    assert first.startswith("A graph author") and first.endswith("OpenAI metadata.")
    assert second.startswith("For every request") and second.endswith("needs them.")
    assert result.verification is not None and result.verification.attributed == 2


@needs_cases
def test_verify_is_a_keyword_of_the_python_api(lgos_kb: KnowledgeBase) -> None:
    case = next(case for case in CASES if case["id"] == "dev-install")
    text = f"{ANSWERS[case['id']]}\n\nThen run `lgos init --wizard`."
    model = ScriptedChatModel(reply=script(answer=text))

    warned = lgos_kb.ask(case["messages"], model=model, verify="warn")
    silent = lgos_kb.ask(case["messages"], model=model, verify="off")

    assert warned.text.startswith(text) and "`--wizard`" in warned.text[len(text) :]
    assert warned.verification is not None and warned.verification.mode == "warn"
    assert silent.text == text and silent.verification is None
