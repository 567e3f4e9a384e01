"""Extractive LGOS answers the grounding check flags (``verification.ok`` false), main and branch.

The 66 LGOS question cases (``tests/data/lgos-cases.json`` and
``../shared/data/lgos-dev-cases.json``) are answered without a chat model (extractive
answers: quoted passages with their links) by this checkout; the same answers, hits and
conversations are then checked by this checkout's grounding code and by a baseline's (default:
/work/main's HEAD, exported read-only with ``git archive``), so the figures differ only by
the check::

    python benchmarks/grounding_extractive.py --home HOME [--data ../shared/data] \\
        [--baseline-repo /work/main] [--output benchmarks/grounding-extractive.json]

The LGOS knowledge base ``lgos`` is indexed into ``--home`` from ``--data`` when missing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SITE = "https://ilkersigirci.github.io/langgraph-openai-serve/"
VERSION = "0.12.0"

# Run under either codebase (only the API both have: ground(), Verification fields).
RUNNER = r"""
import json, sys
from citewise.grounding import ground
from citewise.models import Chunk, Citation, Hit

out = []
for item in json.load(open(sys.argv[1])):
    hits = [Hit(Chunk(**h), 1.0, ("keyword",)) for h in item["hits"]]
    citations = [Citation(**c) for c in item["citations"]]
    _, v = ground(item["text"], hits, item["conversation"], citations)
    reasons = [f"name {t}" for t in v.unsupported] + [f"link {u}" for u in v.outside_links]
    reasons += [f"block {b}" for b in v.unsupported_blocks]
    reasons += [f"citation {c.url}" for c in v.citations if not c.supported]
    reasons += [f"{p.kind} {p.text}" for p in getattr(v, "problems", ())]
    out.append({"id": item["id"], "ok": v.ok, "reasons": reasons})
json.dump(out, sys.stdout)
"""


def extractive_answers(home: Path, data: Path) -> list[dict[str, Any]]:
    """Each case's extractive answer with what its check needs."""
    from langchain_core.messages import convert_to_messages

    from citewise.config import Settings
    from citewise.graph.check import conversation_text
    from citewise.kb import KnowledgeBase

    kb = KnowledgeBase("lgos", settings=Settings(home=home, llm_model=None))
    if not kb.exists:
        kb.index_folder(data / "lgos-docs-0.12.0" / "docs", site_url=SITE, version=VERSION)
    items = []
    for path in (REPO / "tests" / "data" / "lgos-cases.json", data / "lgos-dev-cases.json"):
        for case in json.loads(path.read_text(encoding="utf-8")):
            answer = kb.ask(case["messages"], scope=case["settings"].get("scope", "all"))
            assert answer.kind == "extractive", case["id"]
            # Each hit as one chunk holding its passage (its section's matched chunks).
            hits = [
                {k: getattr(h.chunk, k) for k in ("chunk_id", "doc_id", "position",
                 "section_index", "title", "heading_path", "anchor", "url", "page")}
                | {"text": h.passage}
                for h in answer.hits
            ]  # fmt: skip
            items.append({
                "id": f"{path.stem}:{case['id']}",
                "text": answer.text,
                "hits": hits,
                "citations": [
                    {"url": c.url, "title": c.title, "start_index": c.start_index,
                     "end_index": c.end_index}
                    for c in answer.citations if not c.attributed
                ],
                "conversation": conversation_text(convert_to_messages(case["messages"])),
            })  # fmt: skip
    return items


def run_check(src: Path, payload: Path) -> list[dict[str, Any]]:
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, str(payload)],
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(result.stdout))


def export_baseline(repo: Path, into: Path) -> tuple[Path, str]:
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", head, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src", head


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    flagged = [r for r in results if not r["ok"]]
    kinds = Counter(reason.split(" ", 1)[0] for r in flagged for reason in r["reasons"])
    return {
        "answers": len(results),
        "not_ok": len(flagged),
        "not_ok_by_reason": dict(sorted(kinds.items())),
        "flagged": {r["id"]: r["reasons"] for r in flagged},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--baseline-repo", type=Path, default=Path("/work/main"))
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" /
                        "grounding-extractive.json")  # fmt: skip
    args = parser.parse_args()

    items = extractive_answers(args.home, args.data)
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        payload = Path(tmp) / "items.json"
        payload.write_text(json.dumps(items))
        baseline_src, baseline_head = export_baseline(args.baseline_repo, Path(tmp))
        report = {
            "command": "python benchmarks/grounding_extractive.py --home HOME",
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "branch_commit": head,
            "baseline_commit": baseline_head,
            "baseline": summary(run_check(baseline_src, payload)),
            "branch": summary(run_check(REPO / "src", payload)),
        }
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    for name in ("baseline", "branch"):
        part = report[name]
        print(f"{name}: {part['not_ok']} of {part['answers']} not ok {part['not_ok_by_reason']}")


if __name__ == "__main__":
    main()
