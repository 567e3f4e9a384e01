"""The LGOS dev cases through citewise-rag on the real index, with a planner scripted per case."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from citewise.answering import answer
from citewise.kb import KnowledgeBase
from citewise.models import Hit
from citewise.options import SearchOptions
from citewise.testing import ScriptedCall, ScriptedChatModel, script

from ..conftest import LGOS

CASES_FILE = LGOS.parent / "lgos-dev-cases.json"
CASES: list[dict[str, Any]] = json.loads(CASES_FILE.read_text()) if CASES_FILE.exists() else []
SECTION_URL = re.compile(r'<section url="([^"]+)"')


@dataclass
class Recording:
    """The knowledge base, with every search it is asked for recorded."""

    kb: KnowledgeBase
    calls: list[tuple[str, str | None]] = field(default_factory=list)

    async def asearch(self, query: str, options: SearchOptions) -> list[Hit]:
        self.calls.append((query, options.scope))
        return await self.kb.asearch(query, options)


def planned_queries(case: dict[str, Any]) -> list[str]:
    """What a planner should write: nothing without parts, else one query per part (a
    question of two parts joined by "and" splits there)."""
    question: str = case["messages"][-1]["content"]
    parts = len(case["parts"])
    if parts == 0:
        return []
    pieces = re.split(r",? and ", question, maxsplit=parts - 1)
    return pieces if len(pieces) == parts else [question]


def cite_first_section(call: ScriptedCall) -> str:
    urls = SECTION_URL.findall(call.last)
    return f"See [the docs]({urls[0]})." if urls else "Hello! What would you like to know?"


@pytest.mark.skipif(not CASES, reason=f"dev cases not found at {CASES_FILE}")
@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_dev_case_searches_exactly_when_it_has_parts(
    case: dict[str, Any], lgos_kb: KnowledgeBase
) -> None:
    queries = planned_queries(case)
    planned = {"needs_docs": bool(queries), "queries": queries}
    model = ScriptedChatModel(reply=script(plan=planned, answer=cite_first_section))
    retriever = Recording(lgos_kb)
    scope = case["settings"].get("scope", "all")

    result = answer(case["messages"], retriever, model, options=SearchOptions(scope=scope))

    assert len(model.calls) == 2
    if not case["parts"]:
        assert retriever.calls == [] and result.hits == () and result.citations == ()
        return
    assert sorted(retriever.calls) == sorted((query, scope) for query in queries)
    if scope == "all":
        pages = {hit.chunk.page for hit in result.hits}
        for part in case["parts"]:
            assert set(part) & pages, (case["id"], part)
        (citation,) = result.citations
        assert citation.url == result.hits[0].url
