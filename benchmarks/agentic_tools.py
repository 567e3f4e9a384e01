"""Both agentic workflows on the LGOS dev cases, with a scripted OpenAI-compatible endpoint.

Runs ``citewise eval CASES --endpoint URL --workflow W`` for ``citewise-agentic`` (the
structured planning call decides) and ``citewise-agentic-tools`` (the model calls
``search_docs``) against :class:`citewise.testing.OpenAIStub`, whose planner (or tool call)
searches the user's last message as written, grades every search relevant and answers that
the docs do not cover it; prints each run's searched rate and part recall::

    CITEWISE_HOME=… python benchmarks/agentic_tools.py --kb lgos \\
        --output benchmarks/agentic-tools

A plumbing check of the two decide steps over the same cases, not a model's figure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from citewise.cli import main as citewise
from citewise.testing import OpenAIStub, StubReply

ROOT = Path(__file__).resolve().parent.parent
DEV = ROOT.parent / "shared/data/lgos-dev-cases.json"  # ../shared/data, as benchmarks/README.md
WORKFLOWS = ("citewise-agentic", "citewise-agentic-tools")


def _last_user_message(body: dict[str, Any]) -> str:
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            return str(message["content"]).strip()[:200]
    return ""


def scripted(body: dict[str, Any]) -> StubReply:
    tool = body["tools"][0]["function"]["name"] if body.get("tools") else None
    if tool == "Plan":
        plan = {"needs_docs": True, "queries": [_last_user_message(body)]}
        return StubReply(tool_call=("Plan", plan))
    if tool == "search_docs":
        return StubReply(tool_call=("search_docs", {"query": _last_user_message(body)}))
    if tool == "Grade":
        return StubReply(tool_call=("Grade", {"relevant": "yes"}))
    return StubReply(content="The documentation does not seem to cover this.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=str(DEV))
    parser.add_argument("--kb", required=True)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    summary: dict[str, Any] = {}
    with OpenAIStub(scripted) as stub:
        for workflow in WORKFLOWS:
            out = Path(args.output) / workflow
            citewise(["eval", args.cases, "--kb", args.kb, "--endpoint", stub.base_url,
                      "--model", "scripted", "--workflow", workflow, "--no-langfuse",
                      "--max-failures", "1000", "--output", str(out)])  # fmt: skip
            results = json.loads((out / "results.json").read_text(encoding="utf-8"))
            before = sum(summary.get(w, {}).get("endpoint_calls", 0) for w in summary)
            checks = {name: results["checks"][name] for name in ("searched", "part")}
            summary[workflow] = {
                "retrieval": {k: round(v, 3) for k, v in results["figures"].items()},
                "checks": checks,
                "endpoint_calls": len(stub.requests) - before,
            }
    text = json.dumps(summary, indent=1)
    (Path(args.output) / "summary.json").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
