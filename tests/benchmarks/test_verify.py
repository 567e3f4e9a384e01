"""`python -m benchmarks.verify`: timings of the check and the threshold data, on the dev cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.verify import (
    ANSWER_CHARS,
    NEAR,
    format_report,
    padded,
    run_verify_benchmark,
    wrong_sources,
)
from citewise.grounding import BLOCK_THRESHOLD, CITATION_THRESHOLD
from citewise.kb import KnowledgeBase

from ..conftest import LGOS

CASES = LGOS.parent / "lgos-dev-cases.json"
ANSWERS = Path(__file__).parents[1] / "data" / "lgos-dev-answers.json"


@pytest.mark.skipif(not CASES.exists(), reason=f"dev cases not found at {CASES}")
def test_the_report_times_the_check_and_separates_positives_from_negatives(
    lgos_kb: KnowledgeBase,
) -> None:
    report = run_verify_benchmark(lgos_kb, CASES, ANSWERS, rounds=2)

    assert len(report["cases"]) == 7
    assert report["speed"]["rounds"] == 2 and report["speed"]["verify"]["p50_ms"] > 0
    for kind, threshold in (("block", BLOCK_THRESHOLD), ("citation", CITATION_THRESHOLD)):
        data = report["thresholds"][kind]
        assert data["positives"]["median"] > data["negatives"]["median"]
        (rate,) = [r for r in data["rates"] if r["threshold"] == threshold]
        assert rate["positives_kept"] > 0.9 and rate["negatives_passed"] < 0.2, (kind, rate)
    markdown = format_report(report)
    assert markdown.startswith("# Grounding check") and "| `verify` |" in markdown


def test_answers_are_padded_to_the_benchmark_size(lgos_kb: KnowledgeBase) -> None:
    hits = lgos_kb.search("API key authentication")

    text = padded("Short answer.", hits)

    assert len(text) == ANSWER_CHARS and text.startswith("Short answer.\n\n")
    assert hits[0].url in text


def test_negatives_leave_out_the_sections_a_case_ranks_near_its_own_question(
    lgos_kb: KnowledgeBase,
) -> None:
    install = "How do I install the package?"
    hits = {
        "install": lgos_kb.search(install, top_k=10),
        "auth": lgos_kb.search("API key authentication", top_k=10),
        "same": lgos_kb.search(install, top_k=10),
    }
    near_install = {hit.url for hit in lgos_kb.search(install, top_k=NEAR)}
    # The install search's 11th to 30th sections, as another case's top ten.
    hits["edge"] = [
        h
        for h in lgos_kb.search(install, top_k=NEAR)
        if h.url not in {x.url for x in hits["install"]}
    ][:10]
    near = {"install": near_install, "auth": set(), "same": set(), "edge": set()}

    (auth,) = wrong_sources("install", hits, near)

    assert hits["edge"] and all(hit.url in near_install for hit in hits["edge"])
    assert {hit.url for hit in auth.hits} == {h.url for h in hits["auth"]} - near_install
    assert not {hit.url for hit in auth.hits} & near_install
    assert len(wrong_sources("auth", hits, near)) == 3
