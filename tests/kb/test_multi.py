"""Several knowledge bases answering as one: routed, each under its own defaults, hits
interleaved by rank and labelled with their library and version."""

from __future__ import annotations

import asyncio

import pytest

from citewise.errors import KnowledgeBaseError
from citewise.kb import Library, Status
from citewise.kb.multi import KnowledgeBases
from citewise.testing import ScriptedChatModel, script

from ..server.conftest import SECTION
from .libraries import three_libraries

BOTH = "How do I set a timeout in requests, and API key middleware in LGOS?"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Library:
    return three_libraries(tmp_path_factory.mktemp("multi"))


def test_a_question_naming_none_searches_the_nearest_library(library: Library) -> None:
    hits = KnowledgeBases(library).search("How many days of paid holiday do employees get?")
    assert hits and {hit.library for hit in hits} == {"handbook"}
    assert hits[0].chunk.heading_path[0] == "handbook"
    assert hits[0].as_json()["library"] == "handbook"


def test_hits_of_two_named_libraries_interleave_with_library_and_version(
    library: Library,
) -> None:
    hits = KnowledgeBases(library).search(BOTH)
    assert [hit.library for hit in hits[:2]] in (["requests", "lgos"], ["lgos", "requests"])
    by_library = {hit.library: hit for hit in hits}
    assert by_library["requests"].library_version == "2.34.2"
    assert by_library["lgos"].chunk.heading_path[0] == "langgraph-openai-serve 0.12.0"
    assert by_library["lgos"].as_json()["version"] == "0.12.0"


def test_each_library_is_searched_under_the_requests_options(library: Library) -> None:
    hits = KnowledgeBases(library).search(BOTH, top_k=1)
    # top_k per library, interleaved: the best of each.
    assert [hit.library for hit in hits] == ["requests", "lgos"]
    hits = KnowledgeBases(library, ["requests", "lgos"]).search("sessions", top_k=1)
    assert len(hits) == 1


def test_the_extractive_answer_cites_both_and_says_where_it_searched(library: Library) -> None:
    kbs = KnowledgeBases(library)
    events = list(kbs.stream(BOTH))
    (first, *_) = [event for event in events if isinstance(event, Status)]
    assert first.text == (
        "Searching requests 2.34.2, langgraph-openai-serve 0.12.0 (named in the question)"
    )
    answer = kbs.ask(BOTH)
    assert answer.kind == "extractive"
    titles = [citation.title for citation in answer.citations]
    assert any(t.startswith("requests 2.34.2 › ") for t in titles)
    assert any(t.startswith("langgraph-openai-serve 0.12.0 › ") for t in titles)


def test_a_chat_model_answers_from_the_routed_libraries(library: Library) -> None:
    def cite_all(call) -> str:  # type: ignore[no-untyped-def]
        found = SECTION.findall(call.messages[-1].text)
        return " ".join(f"See [{title}]({url})." for url, title in found)

    model = ScriptedChatModel(reply=script(answer=cite_all))
    answer = asyncio.run(KnowledgeBases(library, model=model).aask(BOTH))
    assert answer.kind != "extractive"
    cited = {hit.library for hit in answer.hits if hit.url in {c.url for c in answer.citations}}
    assert cited == {"requests", "lgos"}


def test_an_unknown_library_names_the_known_ones(library: Library) -> None:
    with pytest.raises(KnowledgeBaseError, match=r"unknown knowledge base 'flask'.*handbook"):
        KnowledgeBases(library, ["requests", "flask"]).search("timeouts")
    with pytest.raises(KnowledgeBaseError, match=r"unknown library 'flask'"):
        KnowledgeBases(library).route("timeouts", ["flask"])


def test_a_chat_models_plan_may_name_the_libraries(library: Library) -> None:
    def plan(call) -> dict[str, object]:  # type: ignore[no-untyped-def]
        assert "handbook: handbook: Every employee" in call.system  # the catalog, offered
        return {"needs_docs": True, "queries": [call.last], "libraries": ["Handbook", "nope"]}

    model = ScriptedChatModel(reply=script(plan=plan, answer="See the sections."))
    # Named by no rule: routed to the nearest library, then the plan picks the handbook.
    answer = KnowledgeBases(library, model=model).ask("How do I rotate my keys?")
    assert answer.hits and {hit.library for hit in answer.hits} == {"handbook"}
    (planned,) = [call for call in model.calls if call.kind == "Plan"]
    assert planned.schema is not None and "libraries" in planned.schema.model_fields


def test_a_single_knowledge_base_plans_without_libraries(library: Library) -> None:
    model = ScriptedChatModel(reply=script(answer="See the sections."))
    library.open("lgos").with_model(model).ask("How do I register a graph?")
    (planned,) = [call for call in model.calls if call.kind == "Plan"]
    assert planned.schema is not None and "libraries" not in planned.schema.model_fields
    assert "several libraries" not in planned.system
