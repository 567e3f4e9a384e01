"""Real answers of a model run, labelled by hand, added to tests/data/grounding-answers.jsonl.

Each label below was given by reading the run's reply against the LGOS 0.12.0 docs (the
sections the answer was written from, and the pages that answer the question), before the
check's verdict on it was looked at; ``why`` says what is right or wrong in it. The items
keep the run's own sections (results.json ``sections``), so the check sees what the model
saw. Run::

    python benchmarks/grounding_real.py RESULTS.json CASES.json

(re)writes the items ``r-CASE`` of the labelled set from that run; other items are kept.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "grounding-answers.jsonl"
ROOT = "https://ilkersigirci.github.io/langgraph-openai-serve/0.12.0/"
SOURCE = "real:qwen2.5-coder-1.5b (benchmarks/real-model-1.5b-56.md)"

# case id -> (label, class, why)
LABELS: dict[str, tuple[str, str, str]] = {
    "name-api-prefix": (
        "right",
        "names",
        "the settings table: the mount prefix for the OpenAI-compatible endpoints",
    ),
    "words-protect-endpoint": (
        "right",
        "unsupported",
        "the docs' API key middleware copied whole, and the client side; the closing "
        "sentence is a summary (slightly broad: health paths stay public)",
    ),
    "multi-install-run": (
        "right",
        "command",
        "uv add langgraph-openai-serve installs; uvicorn app:app --reload starts the server "
        "(the app.py step is left out, nothing is wrong)",
    ),
    "follow-auth-production": (
        "wrong",
        "unsupported",
        "generic API advice (rate limiting, key rotation, monitoring) where the "
        "authentication guide's production notes say something else: none of it is in the docs",
    ),
    "chat-thanks": (
        "right",
        "unsupported",
        "a fine reply to thanks (the planner searched needlessly: the sections are unrelated)",
    ),
    "vague-it-broke": (
        "wrong",
        "unsupported",
        "should ask what does not work; it sends the user to a 'customer support team' the "
        "project does not have (no sections: nothing was searched)",
    ),
    "unrelated-recipe": (
        "right",
        "unsupported",
        "declines the unrelated request (after a needless search)",
    ),
    "scope-tutorials-grafana": (
        "wrong",
        "unsupported",
        "an invented Grafana setup (an HTTP data source on `/api/traces`); the docs' "
        "Grafana path is the production OTel overlay, outside the tutorials scope searched",
    ),
    "lang-de-auth": (
        "right",
        "unsupported",
        "the authentication guide's middleware and client, explained in (clumsy) German",
    ),
    "name-api-docs": (
        "right",
        "contradiction",
        "`LGOS_OPENAI_API_DOCS_ENABLED=false` keeps the docs off (it is also the default, "
        "which the answer does not say)",
    ),
}


def conversation(case: dict[str, object]) -> str:
    messages = case["messages"]
    assert isinstance(messages, list)
    return "\n\n".join(str(m["content"]) for m in messages)


def main() -> None:
    results = json.loads(Path(sys.argv[1]).read_text())
    cases = {c["id"]: c for c in json.loads(Path(sys.argv[2]).read_text())}
    items = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    kept = [item for item in items if not item["id"].startswith("r-")]
    real = {item["id"]: item for item in items if item["id"].startswith("r-")}
    for case in results["cases"]:
        if case["case"] not in LABELS or not case.get("reply"):
            continue
        label, cls, why = LABELS[case["case"]]
        sections = list(dict.fromkeys(url.removeprefix(ROOT) for url in case["sections"]))
        real[f"r-{case['case']}"] = {
            "id": f"r-{case['case']}",
            "question": conversation(cases[case["case"]]),
            "answer": case["reply"],
            "sections": sections,
            "label": label,
            "class": cls,
            "source": SOURCE,
            "split": "real",
            "why": why,
        }
    with DATA.open("w") as out:
        for item in [*kept, *real.values()]:
            out.write(json.dumps(item) + "\n")
    print(f"{len(real)} real items")


if __name__ == "__main__":
    main()
