"""A full evaluation writes its outputs after every case: a run that stops keeps what finished."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citewise.evaluation.harness import run_assistant_eval
from citewise.testing import ScriptedCall, ScriptedChatModel, script
from tests.kb_support import MakeKB, sections, upload

HANDBOOK = sections(
    "Leave policy",
    "Annual leave is 25 days a year.",
    "Sick leave needs a doctor's note after three days.",
)
CASES = [
    {"id": "annual", "messages": [{"role": "user", "content": "How many days of leave?"}],
     "parts": [["hr/leave-policy/"]]},
    {"id": "sick", "messages": [{"role": "user", "content": "When is a note needed?"}],
     "parts": [["hr/leave-policy/"]]},
    {"id": "third", "messages": [{"role": "user", "content": "Anything else?"}], "parts": []},
]  # fmt: skip


def answer(call: ScriptedCall) -> str:
    if "note" in call.last.rsplit("</documentation>", 1)[-1]:
        raise RuntimeError("the model process was stopped")
    return "Annual leave is 25 days a year."


def test_a_stopped_run_keeps_the_cases_that_finished(make_kb: MakeKB, tmp_path: Path) -> None:
    kb = make_kb("files")
    kb.add_documents([upload("hr/leave-policy.md", HANDBOOK)])
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES))
    out = tmp_path / "out"
    model = ScriptedChatModel(reply=script(answer=answer))

    with pytest.raises(RuntimeError, match="stopped"):
        run_assistant_eval(cases, kb, model, out_dir=out)

    results = json.loads((out / "results.json").read_text())
    assert results["provenance"]["finished"] == 1 and results["provenance"]["cases"] == 3
    assert [c["case"] for c in results["cases"]] == ["annual"]
    assert results["cases"][0]["sections"]  # what the answer was written from
    assert "**cases done: 1 of 3** (the run was stopped)" in (out / "report.md").read_text()
    assert json.loads((out / "queries.json").read_text())
