"""The endpoint evaluation command against a scripted OpenAI-compatible server on 127.0.0.1.

Runs exactly the documented command (``citewise eval CASES --runs N --endpoint URL --model
NAME --judge-model NAME --output DIR``) against :class:`citewise.testing.OpenAIStub`, whose
planner searches the user's last message as written (no search for nothing: it always
searches) and whose answer says the docs do not cover it; then replays the planner queries
the run wrote through every search type (``--replay``), with no model::

    .venv/bin/python benchmarks/scripted_endpoint.py --cases tests/data/lgos-cases.json \\
        --kb lgos --runs 1 --output benchmarks/replay/lgos-scripted

A plumbing check and a replay file for retrieval comparisons, not a model's figure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from citewise.cli import main as citewise
from citewise.testing import OpenAIStub, StubReply


def last_user_message(body: dict[str, Any]) -> str:
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            return str(message["content"]).strip()
    return ""


def scripted(body: dict[str, Any]) -> StubReply:
    tool = body["tools"][0]["function"]["name"] if body.get("tools") else None
    if tool == "Plan":
        plan = {"needs_docs": True, "queries": [last_user_message(body)[:200]]}
        return StubReply(tool_call=("Plan", plan))
    if tool == "Verdict":
        return StubReply(tool_call=("Verdict", {"passed": "yes", "reason": "scripted"}))
    if tool == "GroundedVerdict":
        return StubReply(tool_call=("GroundedVerdict", {"grounded": "yes", "offending": []}))
    if tool == "Grade":
        return StubReply(tool_call=("Grade", {"relevant": "yes"}))
    return StubReply(content="The documentation does not seem to cover this.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", required=True)
    parser.add_argument("--kb", required=True)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    out = Path(args.output)
    with OpenAIStub(scripted) as stub:
        argv = ["eval", args.cases, "--kb", args.kb, "--runs", str(args.runs),
                "--endpoint", stub.base_url, "--model", "scripted-planner",
                "--judge-model", "scripted-planner", "--max-failures", "1000",
                "--output", str(out / "run")]  # fmt: skip
        citewise(argv)
    citewise(["eval", args.cases, "--kb", args.kb, "--replay", str(out / "run" / "queries.json"),
              "--max-failures", "1000", "--output", str(out / "replay")])  # fmt: skip
    replayed = json.loads((out / "replay" / "results.json").read_text(encoding="utf-8"))
    print(json.dumps({m: r["figures"] for m, r in replayed["modes"].items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
