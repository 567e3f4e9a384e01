"""Named per-check scores: each deterministic rule passes and fails for its own reason."""

from __future__ import annotations

from dataclasses import replace

from citewise.evaluation.cases import Case
from citewise.evaluation.checks import (
    CheckScore,
    aggregate,
    answer_checks,
    combined,
    part_checks,
    shape_check,
)
from citewise.kb import KnowledgeBase
from citewise.models import Answer, Citation


def case(
    reply: str | None = None, parts: tuple[tuple[str, ...], ...] = (), **settings: str
) -> Case:
    return Case(
        id="c",
        messages=({"role": "user", "content": "hi"},),
        settings=dict(settings),
        parts=parts,
        reply=reply,
    )


def answer(text: str, *, queries: tuple[str, ...] = (), cited: int = 0) -> Answer:
    citations = tuple(
        Citation(url=f"https://example.org/{i}", title=f"page {i}", start_index=0, end_index=1)
        for i in range(cited)
    )
    return Answer(text=text, citations=citations, hits=(), queries=queries)


def by_name(checks: list[CheckScore]) -> dict[str, bool | None]:
    return {check.name: check.passed for check in checks}


def test_small_talk_must_not_search_or_cite() -> None:
    greeting = case("small_talk")
    assert shape_check(greeting, answer("Hello! Ask me about the docs.")).passed is True
    searched = shape_check(greeting, answer("Hello!", queries=("hello",)))
    assert searched.passed is False and "searched" in searched.detail
    cited = shape_check(greeting, answer("Hello!", cited=1))
    assert cited.passed is False and "citation" in cited.detail
    checks = by_name(answer_checks(greeting, answer("Hi", queries=("hi",))))
    assert checks["searched"] is False and checks["shape"] is False


def test_a_clarification_asks_and_cites_nothing() -> None:
    vague = case("clarify")
    assert shape_check(vague, answer("What are you trying to do?")).passed is True
    statement = shape_check(vague, answer("Here is how to install it."))
    assert statement.passed is False and "no question" in statement.detail
    assert shape_check(vague, answer("Which page do you mean?", cited=2)).passed is False


def test_a_scope_miss_names_the_scope_and_suggests_all() -> None:
    miss = case("scope_hint", scope="tutorials")
    good = (
        "The tutorials do not cover Grafana. Ask again with the scope `all` to search everything."
    )
    assert shape_check(miss, answer(good, queries=("grafana",))).passed is True
    also_good = "Nothing in the tutorials section; try searching all of the documentation."
    assert shape_check(miss, answer(also_good)).passed is True
    unnamed = shape_check(miss, answer("Try the scope `all`."))
    assert unnamed.passed is False and "'tutorials'" in unnamed.detail
    no_hint = shape_check(miss, answer("The tutorials do not say."))
    assert no_hint.passed is False and "all the docs" in no_hint.detail
    # A scope named only inside a longer word is not named.
    assert shape_check(miss, answer("See tutorials-extra, or scope `all`.")).passed is False


def test_a_plain_answer_is_left_to_the_judge_and_unrelated_cites_nothing() -> None:
    question = case(parts=(("getting-started/",),))
    assert shape_check(question, answer("pip install x")).passed is None
    unrelated = case()
    assert shape_check(unrelated, answer("I only answer about the docs.")).passed is True
    assert shape_check(unrelated, answer("It is sunny.", cited=1)).passed is False


def test_parts_are_found_at_section_level_when_the_case_names_sections(
    lgos_kb: KnowledgeBase,
) -> None:
    hits = tuple(lgos_kb.search("LGOS_OPENAI_API_PREFIX", top_k=10))
    reference = [h for h in hits if h.chunk.page == "reference/"]
    assert reference, "the API reference answers this"
    found = reference[0].chunk
    paged = case(parts=(("reference/",),))
    result = Answer(text="", citations=(), hits=hits, queries=("q",))
    assert by_name(part_checks(paged, result)) == {"part_0": True}
    right = replace(paged, anchors=((f"reference/#{found.anchor}",),))
    (check,) = part_checks(right, result)
    assert check.passed and check.detail.startswith("section rank")
    wrong = replace(paged, anchors=(("reference/#no-such-entry",),))
    (missed,) = part_checks(wrong, result)
    assert missed.passed is False and "the page was" in missed.detail


def test_scores_aggregate_per_check_and_combine_over_runs() -> None:
    passed = [CheckScore("searched", "structural", True), CheckScore("part_0", "structural", True)]
    failed = [
        CheckScore("searched", "structural", False, "did not search"),
        CheckScore("part_0", "structural", False, "none"),
        CheckScore("shape", "shape", None),
    ]
    totals = aggregate([passed, failed])
    assert totals["searched"] == {
        "kind": "structural", "passed": 1, "failed": 1, "applicable": 2, "rate": 0.5
    }  # fmt: skip
    assert "shape" not in totals  # not applicable anywhere
    merged = {c.name: c for c in combined([passed, failed])}
    assert merged["searched"].passed is False
    assert merged["searched"].detail == "did not search (1/2 runs)"
    assert merged["shape"].passed is None
