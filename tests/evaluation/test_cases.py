"""Loading question cases: the shared dev cases, and clear errors for broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.errors import SourceError
from citewise.evaluation.cases import load_cases

from ..conftest import SHARED_DATA, require


def test_loads_the_shared_dev_cases() -> None:
    cases = load_cases(require(SHARED_DATA / "lgos-dev-cases.json"))
    by_id = {case.id: case for case in cases}
    assert by_id["dev-litellm"].parts == (("how-to-guides/openai-proxies/",),)
    assert by_id["dev-litellm"].scope == "library"
    assert by_id["dev-errors"].scope is None
    assert by_id["dev-hello"].parts == () and by_id["dev-hello"].reply == "small_talk"
    assert by_id["dev-followup"].question == "Which services does it start?"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ({"id": "a", "messages": []}, "'a': messages must be a non-empty list"),
        (
            {"id": "b", "messages": [{"role": "assistant", "content": "hi"}]},
            "'b': messages must end with the user's message",
        ),
        (
            {"id": "c", "messages": [{"role": "user", "content": "q"}], "parts": [[]]},
            "'c': parts must be",
        ),
        (
            {"id": "d", "messages": [{"role": "user", "content": "q"}], "reply": "poem"},
            "'d': reply must be one of",
        ),
    ],
)
def test_broken_cases_name_the_case_and_field(
    tmp_path: Path, case: dict[str, object], message: str
) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([case]))
    with pytest.raises(SourceError, match=message):
        load_cases(path)


def test_duplicate_ids_and_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    one = {"id": "x", "messages": [{"role": "user", "content": "q"}]}
    path.write_text(json.dumps([one, one]))
    with pytest.raises(SourceError, match="appears twice"):
        load_cases(path)
    path.write_text("[")
    with pytest.raises(SourceError, match="not valid JSON"):
        load_cases(path)
