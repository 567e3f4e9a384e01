"""The agentic workflow's budget per request (``agent_rewrites``, ``agent_grading``) through
the official openai SDK against a real server: obeyed, bounded, and shown in the status."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from pathlib import Path

import openai
import pytest
from openai import OpenAI

from citewise.config import Settings
from citewise.graph.agentic import NOT_GRADING, rewriting_status, spent_status
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedChatModel, script

from .conftest import client, settings_metadata

QUESTION = "How do I add API key authentication?"


@pytest.fixture
def grading_no() -> ScriptedChatModel:
    """Grades every search irrelevant and rewrites it to a new query each time."""
    numbers = count(1)
    return ScriptedChatModel(
        reply=script(
            grade="no",
            rewrite=lambda call: {"query": f"authentication attempt {next(numbers)}"},
            answer="Not covered.",
        )
    )


@pytest.fixture
def sdk(lgos_home: Path, grading_no: ScriptedChatModel) -> Iterator[OpenAI]:
    app = create_app(
        Settings(home=lgos_home), ServerOptions(kb="lgos"), model_factory=lambda: grading_no
    )
    with running(app) as url, client(url) as sdk:
        yield sdk


def statuses(sdk: OpenAI, **settings: object) -> list[str]:
    """The statuses a streamed chat completion shows (``show_status``)."""
    chunks = sdk.chat.completions.create(
        model="citewise-agentic",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        metadata=settings_metadata(show_status=True, **settings),
    )
    shown = "".join(
        getattr(chunk.choices[0].delta, "reasoning_content", None) or ""
        for chunk in chunks
        if chunk.choices
    )
    return [line for line in shown.splitlines() if line.strip()]


def test_a_request_sets_the_rewrites_and_the_status_reports_them(
    sdk: OpenAI, grading_no: ScriptedChatModel
) -> None:
    shown = statuses(sdk, agent_rewrites=3)
    assert [s for s in shown if "rewrit" in s] == [
        rewriting_status(1, 3), rewriting_status(2, 3), rewriting_status(3, 3), spent_status(3),
    ]  # fmt: skip
    assert [call.kind for call in grading_no.calls].count("Rewrite") == 3
    grading_no.calls.clear()
    assert spent_status(1) in statuses(sdk)  # the default budget: one rewrite
    assert [call.kind for call in grading_no.calls].count("Rewrite") == 1


def test_grading_off_for_one_request(sdk: OpenAI, grading_no: ScriptedChatModel) -> None:
    shown = statuses(sdk, agent_grading=False)
    assert NOT_GRADING in shown
    assert [call.kind for call in grading_no.calls] == ["Plan", "answer"]


def test_a_budget_over_the_hard_bound_is_a_400_naming_it(sdk: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        statuses(sdk, agent_rewrites=4)
    assert raised.value.param == "metadata.citewise_settings.agent_rewrites"
