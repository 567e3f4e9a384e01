"""The check step of both workflows: verification on every answer, warn and regenerate."""

from __future__ import annotations

import pytest

from citewise.answering import AGENTIC, RAG, Done, TextDelta, stream_answer
from citewise.models import Answer
from citewise.options import SearchOptions
from citewise.testing import ScriptedCall, ScriptedChatModel, script

from ..fakes import CONFIGURE, INSTALL, FakeRetriever

GROUNDED = f"Install it with `pip install example` ([Install]({INSTALL.url}))."
FABRICATED = f"Install it with `pip install example --turbo` ([Install]({INSTALL.url}))."


def run(model: ScriptedChatModel, verify: str, workflow: str = RAG) -> tuple[str, Answer]:
    """The text a client saw streamed, and the final answer."""
    options = SearchOptions(verify=verify)  # type: ignore[arg-type]
    events = list(
        stream_answer(
            "How do I install it?", FakeRetriever(), model, options=options, workflow=workflow
        )
    )
    done = events[-1]
    assert isinstance(done, Done)
    return "".join(e.text for e in events if isinstance(e, TextDelta)), done.answer


@pytest.mark.parametrize("workflow", [RAG, AGENTIC])
def test_every_answer_carries_its_verification(workflow: str) -> None:
    model = ScriptedChatModel(reply=script(answer=FABRICATED))
    streamed, answer = run(model, "report", workflow)

    assert answer.verification is not None and answer.verification.unsupported == ("--turbo",)
    assert streamed == answer.text == FABRICATED
    assert [c.supported for c in answer.verification.citations] == [True]


def test_verify_off_attaches_nothing() -> None:
    _, answer = run(ScriptedChatModel(reply=script(answer=FABRICATED)), "off")

    assert answer.verification is None


def test_warn_appends_a_visible_warning_that_is_streamed_too() -> None:
    streamed, answer = run(ScriptedChatModel(reply=script(answer=FABRICATED)), "warn")

    assert answer.text.startswith(FABRICATED)
    assert "**Check this answer:**" in answer.text and "`--turbo`" in answer.text
    assert streamed == answer.text
    _, clean = run(ScriptedChatModel(reply=script(answer=GROUNDED)), "warn")
    assert clean.text == GROUNDED


def test_regenerate_writes_once_more_naming_the_unsupported_tokens() -> None:
    replies = iter([FABRICATED, GROUNDED])

    def answer(call: ScriptedCall) -> str:
        return next(replies)

    model = ScriptedChatModel(reply=script(answer=answer))
    streamed, result = run(model, "regenerate")

    assert [call.kind for call in model.calls] == ["Plan", "answer", "answer"]
    retry = model.calls[-1]
    assert "--turbo" in retry.last and "not" in retry.last
    assert retry.messages[-2].text == FABRICATED  # the first answer, as the model's turn
    # The first answer was held back: the client saw only the second.
    assert streamed == result.text == GROUNDED
    assert result.verification is not None and result.verification.ok
    assert result.verification.regenerated


def test_regenerate_releases_a_good_first_answer_without_a_second_call() -> None:
    model = ScriptedChatModel(reply=script(answer=GROUNDED))
    streamed, result = run(model, "regenerate")

    assert [call.kind for call in model.calls] == ["Plan", "answer"]
    assert streamed == result.text == GROUNDED
    assert result.verification is not None and not result.verification.regenerated


def test_regenerate_happens_at_most_once() -> None:
    model = ScriptedChatModel(reply=script(answer=FABRICATED))
    streamed, result = run(model, "regenerate")

    assert [call.kind for call in model.calls] == ["Plan", "answer", "answer"]
    assert streamed == result.text == FABRICATED
    assert result.verification is not None and result.verification.unsupported == ("--turbo",)


def test_an_answer_with_no_links_is_cited_by_attribution() -> None:
    text = "To configure the guide, set EXAMPLE_KEY in the environment."
    _, answer = run(ScriptedChatModel(reply=script(answer=text)), "report")

    (citation,) = answer.citations
    assert citation.attributed and citation.url == CONFIGURE.url
    assert (citation.start_index, citation.end_index) == (0, len(text))


def test_names_from_the_user_count_and_names_from_earlier_answers_do_not() -> None:
    turns = [
        {"role": "user", "content": "Does pip install example take --turbo?"},
        {"role": "assistant", "content": "Yes, and also `--hyper`."},
        {"role": "user", "content": "And how do I install it?"},
    ]
    answer = f"Install it with `pip install example --turbo --hyper` ([Install]({INSTALL.url}))."
    events = list(
        stream_answer(turns, FakeRetriever(), ScriptedChatModel(reply=script(answer=answer)))
    )
    done = events[-1]
    assert isinstance(done, Done) and done.answer.verification is not None

    assert done.answer.verification.unsupported == ("--hyper",)
