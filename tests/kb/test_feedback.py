"""The feedback store on a real file: answers remembered without their question's text,
ratings kept across restarts (a new store on the same file), the bounds, the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.kb.diagnostics import digest
from citewise.kb.feedback import (
    MAX_ANSWERS,
    MAX_BYTES,
    MAX_RATINGS,
    FeedbackError,
    FeedbackStore,
)
from citewise.models import Answer, Citation

QUESTION = "How do I add API keys to the server?"


def answer(url: str = "https://docs.example/guide/#add-api-keys") -> Answer:
    text = f"Set the keys ([Add API keys]({url}))."
    citation = Citation(url=url, title="Add API keys", start_index=14, end_index=len(text) - 2)
    return Answer(text=text, citations=(citation,), hits=(), kind="generated")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def store(path: Path, clock: Clock | None = None, **options: bool) -> FeedbackStore:
    return FeedbackStore(path, clock=clock or Clock(), **options)


def test_a_rating_keeps_the_answer_but_not_the_question_and_survives_a_restart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "feedback.json"
    first = store(path)
    first.remember("resp_1", answer(), kb="docs", workflow="citewise-rag", question=QUESTION)
    kept = first.rate("resp_1", "down", "It missed the restart step")
    assert kept["answer"]["sections"] == [
        {"url": "https://docs.example/guide/#add-api-keys", "title": "Add API keys"}
    ]
    assert QUESTION not in path.read_text()
    assert kept["answer"]["question_hash"] == digest(QUESTION)

    again = store(path)  # a restart: a new process reads the same file
    [rating] = again.ratings()
    assert rating["rating"] == "down" and rating["comment"] == "It missed the restart step"
    assert rating["answer"]["workflow"] == "citewise-rag" and rating["answer"]["kb"] == "docs"


def test_the_question_text_is_kept_only_when_the_operator_enables_it(tmp_path: Path) -> None:
    path = tmp_path / "feedback.json"
    kept = store(path, keep_questions=True)
    kept.remember("resp_1", answer(), kb="docs", workflow="citewise-rag", question=QUESTION)
    assert json.loads(path.read_text())["answers"][0]["question"] == QUESTION


def test_a_second_rating_replaces_the_first(tmp_path: Path) -> None:
    feedback = store(tmp_path / "feedback.json")
    feedback.remember("resp_1", answer(), kb="docs", workflow="citewise-rag", question=QUESTION)
    feedback.rate("resp_1", "down")
    feedback.rate("resp_1", "up", "on second thought, fine")
    assert [r["rating"] for r in feedback.ratings()] == ["up"]


@pytest.mark.parametrize(
    ("response_id", "rating", "comment", "status"),
    [
        ("resp_1", "meh", "", 400),
        ("resp_1", "up", "x" * 1001, 400),
        ("resp_unknown", "up", "", 404),
    ],
)
def test_bad_ratings_are_refused_naming_the_problem(
    tmp_path: Path, response_id: str, rating: str, comment: str, status: int
) -> None:
    feedback = store(tmp_path / "feedback.json")
    feedback.remember("resp_1", answer(), kb="docs", workflow="citewise-rag", question=QUESTION)
    with pytest.raises(FeedbackError) as raised:
        feedback.rate(response_id, rating, comment)
    assert raised.value.status == status


def test_an_answer_of_another_knowledge_base_cannot_be_rated_with_its_kb(tmp_path: Path) -> None:
    feedback = store(tmp_path / "feedback.json")
    feedback.remember("resp_1", answer(), kb="other", workflow="citewise-rag", question=QUESTION)
    with pytest.raises(FeedbackError, match="not of knowledge base 'docs'") as raised:
        feedback.rate("resp_1", "up", kb="docs")
    assert raised.value.status == 403


def test_the_store_stays_within_its_bounds(tmp_path: Path) -> None:
    path = tmp_path / "feedback.json"
    feedback = store(path)
    long_comment = "y" * 1000
    for n in range(MAX_RATINGS + 50):
        feedback.remember(f"resp_{n}", answer(f"https://docs.example/p{n}/#s"), kb="docs",
                          workflow="citewise-rag", question=f"question {n}")  # fmt: skip
        feedback.rate(f"resp_{n}", "up" if n % 3 else "down", long_comment)
    data = json.loads(path.read_text())
    assert len(data["answers"]) <= MAX_ANSWERS and len(data["ratings"]) <= MAX_RATINGS
    assert path.stat().st_size <= MAX_BYTES
    assert data["ratings"][-1]["response_id"] == f"resp_{MAX_RATINGS + 49}"  # the newest


def test_the_summary_has_the_helpful_rate_per_window_and_the_worst_questions(
    tmp_path: Path,
) -> None:
    clock = Clock()
    feedback = store(tmp_path / "feedback.json", clock)
    for n, (question, rating) in enumerate(
        [("q-bad", "down"), ("q-bad", "down"), ("q-good", "up"), ("q-mixed", "up")]
    ):
        feedback.remember(f"resp_{n}", answer(f"https://docs.example/{question}/#s"),
                          kb="docs", workflow="citewise-rag", question=question)  # fmt: skip
        feedback.rate(f"resp_{n}", rating)
    clock.now += 2 * 86400  # two days later: one more, the others out of 1h and 1d
    feedback.remember("resp_9", answer(), kb="docs", workflow="citewise-rag", question="q-mixed")
    feedback.rate("resp_9", "down")

    summary = feedback.summary()
    assert summary["windows"]["1h"] == {"ratings": 1, "up": 0, "down": 1, "helpful_rate": 0.0}
    assert summary["windows"]["7d"]["helpful_rate"] == 0.4
    assert summary["windows"]["all"]["ratings"] == 5
    worst = summary["worst"]
    assert [row["question_hash"] for row in worst] == [digest("q-bad"), digest("q-mixed")]
    assert worst[0]["down"] == 2 and worst[0]["sections"][0]["url"].endswith("/q-bad/#s")
    assert len(worst[1]["sections"]) == 2  # both answers' sections
