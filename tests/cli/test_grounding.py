"""`citewise ask` and the grounding check: ``--json`` reports it, ``--verify`` sets it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citewise.cli import main
from citewise.testing import OpenAIStub, StubReply

from .test_query import QUESTION, SECTION_URL


def endpoint(body: dict[str, Any]) -> StubReply:
    """Plans the question as written; the answer invents a flag beside a real command."""
    if body.get("tools"):
        question = body["messages"][-1]["content"]
        return StubReply(tool_call=("Plan", {"needs_docs": True, "queries": [question]}))
    url = SECTION_URL.findall(body["messages"][-1]["content"])[0]
    return StubReply(
        content=f"Add a middleware that checks the bearer key ([Authentication]({url})), then "
        "restart with `uvicorn app:app --strict-auth`."
    )


@pytest.fixture
def fabricating(lgos_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    with OpenAIStub(endpoint) as server:
        monkeypatch.setenv("CITEWISE_LLM_MODEL", "stub-model")
        monkeypatch.setenv("CITEWISE_LLM_BASE_URL", server.base_url)
        monkeypatch.delenv("CITEWISE_LLM_API_KEY", raising=False)
        yield server


def test_ask_json_reports_the_verification(
    fabricating: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", QUESTION, "--kb", "lgos", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)

    verification = payload["verification"]
    assert verification["ok"] is False and verification["mode"] == "report"
    assert "--strict-auth" in verification["unsupported"]
    assert all("attributed" not in note for note in payload["annotations"])


def test_ask_names_what_the_check_found_and_verify_warn_puts_it_in_the_answer(
    fabricating: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", QUESTION, "--kb", "lgos"]) == 0
    out, err = capsys.readouterr()
    assert "Check this answer" not in out
    assert "citewise: the grounding check found not in the sections:" in err
    assert "--strict-auth" in err

    assert main(["ask", QUESTION, "--kb", "lgos", "--verify", "warn"]) == 0
    out, _ = capsys.readouterr()
    assert "**Check this answer:**" in out and "`--strict-auth`" in out


def test_ask_verify_off_reports_nothing(
    fabricating: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", QUESTION, "--kb", "lgos", "--json", "--verify", "off"]) == 0
    assert json.loads(capsys.readouterr().out)["verification"] is None


def test_an_extractive_ask_is_verified_too(
    lgos_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", QUESTION, "--kb", "lgos", "--json"]) == 0
    verification = json.loads(capsys.readouterr().out)["verification"]
    assert verification["ok"] is True and verification["unsupported"] == []
