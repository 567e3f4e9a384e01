"""Routing over several knowledge bases: does each question reach the right library?

``run`` builds (once) three knowledge bases in ``CITEWISE_HOME`` (``lgos``: LGOS 0.12.0,
``requests``: requests 2.34.2, ``citewise``: this repository's ``docs/``), then answers each
case of ``benchmarks/routing-questions.json`` three ways in the same run:

- ``extractive``: :class:`citewise.kb.multi.KnowledgeBases` with no chat model;
- ``scripted``: the same with the scripted test model (its plan searches the question, its
  answer cites the first section of each library it was given);
- ``baseline``: no routing: the library of the nearest section over all three pooled
  (cosine), and for two-library questions the libraries among the pooled top 3.

For each it reports right KB (the libraries the answer's sections came from are exactly the
expected ones), the
two-library questions whose answer cites both, and page@3 (each expected library's expected
page among its top 3 hits), over all cases and per split (``dev``: looked at while tuning
the rules; ``held_out``: not).

    CITEWISE_HOME=/tmp/routing nice python benchmarks/routing.py run \
        --output benchmarks/routing.json
    python benchmarks/routing.py report benchmarks/routing.json > benchmarks/routing.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CASES = ROOT / "benchmarks" / "routing-questions.json"
SOURCES = {
    "lgos": [str(SHARED / "lgos-docs-0.12.0" / "docs"), "--version", "0.12.0",
             "--site-url", "https://ilkersigirci.github.io/langgraph-openai-serve/"],
    "requests": [str(SHARED / "requests-2.34.2" / "docs"), "--version", "",
                 "--site-url", "https://requests.readthedocs.io/en/v2.34.2/",
                 "--page-form", "dirhtml"],
    "citewise": [str(ROOT / "docs")],
}  # fmt: skip
_SECTION = re.compile(r'<section url="([^"]+)" title="([^"]*)">')


def build(library: Any) -> None:
    """Index the three knowledge bases that are not in the store yet."""
    for name, argv in SOURCES.items():
        if name not in library.names():
            cmd = [sys.executable, "-m", "citewise", "index", *argv[:1], "--kb", name, "-q"]
            subprocess.run([*cmd, *argv[1:]], check=True)  # noqa: S603


def scripted_answer(call: Any) -> str:
    """Cite the first section the prompt gives of each library (its title leads with the
    library's label, ``requests 2.34.2 › …``)."""
    prompt = "\n".join(str(m.content) for m in call.messages)
    first: dict[str, str] = {}
    for url, title in _SECTION.findall(prompt):
        first.setdefault(title.split(" › ")[0], url)
    return " ".join(f"See [this section]({url})." for url in first.values()) or "Not found."


def _cited(answer: Any) -> set[str]:
    by_url = {hit.url: hit.library for hit in answer.hits}
    return {by_url[c.url] for c in answer.citations if c.url in by_url}


def _page_ok(case: dict[str, Any], hits: list[Any]) -> bool:
    for kb in case["kbs"]:
        pages = [hit.chunk.page for hit in hits if hit.library == kb][:3]
        if not any(p.strip("/").startswith(e) for p in pages for e in case["pages"]):
            return False
    return True


async def _routed(kbs: Any, case: dict[str, Any]) -> dict[str, Any]:
    route = await asyncio.to_thread(kbs.route, case["question"])
    answer = await kbs.aask(case["question"])
    # The libraries the answer's sections came from: what was searched, after any plan.
    searched = list(dict.fromkeys(hit.library for hit in answer.hits))
    return {"route": searched, "rules": list(route.names), "how": route.how,
            "cited": sorted(_cited(answer)), "page": _page_ok(case, list(answer.hits))}  # fmt: skip


def _baseline(library: Any, names: list[str], case: dict[str, Any]) -> dict[str, Any]:
    from citewise.retrieval.hybrid import search

    pooled = []
    for name in names:
        kb = library.open(name)
        pooled += [(hit.score, name, hit) for hit in
                   search(kb.store, kb.embedder, case["question"], k=3, mode="vector")]  # fmt: skip
    pooled.sort(key=lambda item: -item[0])
    route = [pooled[0][1]]
    if len(case["kbs"]) > 1:
        route = list(dict.fromkeys(name for _, name, _ in pooled[:3]))
    top = [replace(hit, library=name) for _, name, hit in pooled[:3]]
    return {"route": route, "how": "nearest", "cited": route, "page": _page_ok(case, top)}


def run(output: Path) -> None:
    from citewise.kb import Library
    from citewise.kb.multi import KnowledgeBases
    from citewise.testing import ScriptedChatModel, script

    library = Library()
    build(library)
    names = list(SOURCES)
    scripted = Library(
        model_factory=lambda: ScriptedChatModel(reply=script(answer=scripted_answer))
    )
    ways = {
        "extractive": KnowledgeBases(library, names),
        "scripted": KnowledgeBases(scripted, names),
    }
    cases = json.loads(CASES.read_text(encoding="utf-8"))["cases"]
    results: dict[str, list[dict[str, Any]]] = {way: [] for way in [*ways, "baseline"]}
    started = time.perf_counter()
    for case in cases:
        for way, kbs in ways.items():
            results[way].append(asyncio.run(_routed(kbs, case)))
        results["baseline"].append(_baseline(library, names, case))
    cards = [card.as_json() for card in KnowledgeBases(library, names).cards()]
    output.write_text(json.dumps({"cases": cases, "results": results, "cards": cards,
                                  "seconds": round(time.perf_counter() - started, 1)},
                                 indent=1) + "\n", encoding="utf-8")  # fmt: skip


def _scores(cases: list[dict[str, Any]], rows: list[dict[str, Any]]) -> dict[str, Any]:
    right = [set(r["route"]) == set(c["kbs"]) for c, r in zip(cases, rows, strict=True)]
    two = [(c, r) for c, r in zip(cases, rows, strict=True) if len(c["kbs"]) > 1]
    both = sum(set(c["kbs"]) <= set(r["cited"]) for c, r in two)
    pages = sum(r["page"] for r in rows) / len(rows)
    return {"n": len(cases), "right_kb": sum(right) / len(cases), "two": len(two),
            "two_cite_both": both, "page_at_3": pages}  # fmt: skip


def report(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    cases = data["cases"]
    print("# Routing over three knowledge bases\n")
    print("`python benchmarks/routing.py run` (see its docstring); cases: "
          "`benchmarks/routing-questions.json`.\n")  # fmt: skip
    print("| way | split | n | right KB | two-library cite both | page@3 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for way, rows in data["results"].items():
        for split in ("all", "dev", "held_out"):
            keep = [i for i, c in enumerate(cases) if split in ("all", c["split"])]
            s = _scores([cases[i] for i in keep], [rows[i] for i in keep])
            print(f"| {way} | {split} | {s['n']} | {s['right_kb']:.3f} | "
                  f"{s['two_cite_both']}/{s['two']} | {s['page_at_3']:.2f} |")  # fmt: skip
    print("\n## Misrouted (extractive)\n")
    for case, row in zip(cases, data["results"]["extractive"], strict=True):
        if set(row["route"]) != set(case["kbs"]):
            got = f"got {row['route']} ({row['how']})"
            print(f"- {case['question']} — expected {case['kbs']}, {got}")
    print(f"\nRun time: {data['seconds']} s for all three ways.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run").add_argument("--output", type=Path, required=True)
    sub.add_parser("report").add_argument("path", type=Path)
    args = parser.parse_args()
    run(args.output) if args.command == "run" else report(args.path)


if __name__ == "__main__":
    main()
