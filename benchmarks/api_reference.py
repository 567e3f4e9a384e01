"""Retrieval over the docs of a release with its API reference: API parts and prose parts apart.

Indexes LGOS 0.12.0 (Markdown + mkdocstrings) and requests 2.34.2 (Sphinx + autodoc) with
their API reference, then for each dev case part finds the rank of the first hit on one of
the expected sections (``page#anchor``; the page alone for a page's first title) in hybrid
search, and reports recall@3 and MRR (over the top 10) for API-reference parts and prose
parts separately. Page-level figures come from ``citewise eval --retrieval-only`` on the same
knowledge bases (written beside this report).

    .venv/bin/python benchmarks/api_reference.py [--home DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from citewise.config import Settings
from citewise.kb import KnowledgeBase

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
SETS = [
    # (knowledge base, docs folder, site URL, version, cases)
    ("lgos-api", SHARED / "lgos-docs-0.12.0" / "docs",
     "https://ilkersigirci.github.io/langgraph-openai-serve/", "0.12.0",
     ROOT / "tests" / "data" / "lgos-api-cases.json"),
    ("requests-api", SHARED / "requests-2.34.2" / "docs",
     "https://requests.readthedocs.io/en/", "v2.34.2",
     ROOT / "tests" / "data" / "requests-cases.json"),
]  # fmt: skip
TOP_K = 10


def rank(urls: list[str], base: str, anchors: list[str]) -> int | None:
    wanted = {base + anchor for anchor in anchors}
    for index, url in enumerate(urls, start=1):
        if url in wanted:
            return index
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", default=None, help="CITEWISE_HOME (default: a temp folder)")
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "api-reference"))
    args = parser.parse_args()
    home = Path(args.home or tempfile.mkdtemp(prefix="citewise-api-bench-"))
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    settings = Settings(home=home)
    results: dict[str, object] = {"top_k": TOP_K, "sets": {}}
    lines = ["# Retrieval with the API reference", "",
             f"- command: `{' '.join([Path(sys.executable).name, *sys.argv])}`",
             f"- hybrid search, top {TOP_K}, MiniLM (the default embedder); a part is found "
             "when a hit is one of its expected sections (`page#anchor`)", "",
             "| docs | parts | kind | recall@3 | MRR@10 |",
             "| --- | --- | --- | ---: | ---: |"]  # fmt: skip
    for name, docs, site, version, cases_path in SETS:
        kb = KnowledgeBase(name, settings=settings)
        started = time.perf_counter()
        # Read the Docs builds requests with dirhtml by a project setting, not its source.
        form = "dirhtml" if "requests" in name else None
        report = kb.index_folder(docs, site_url=site, version=version, page_form=form)
        base = f"{site}{version}/"
        cases = json.loads(cases_path.read_text(encoding="utf-8"))
        by_kind: dict[str, list[int | None]] = {"api": [], "prose": []}
        detail = []
        for case in cases:
            query = case["messages"][-1]["content"]
            hits = kb.search(query, top_k=TOP_K, scope=case["settings"].get("scope"))
            urls = [hit.url for hit in hits]
            for index, anchors in enumerate(case["anchors"]):
                found = rank(urls, base, anchors)
                by_kind[case["kind"]].append(found)
                detail.append({"case": case["id"], "part": index, "kind": case["kind"],
                               "rank": found, "top3": urls[:3]})  # fmt: skip
        figures = {}
        for kind, ranks in by_kind.items():
            if not ranks:
                continue
            recall3 = sum(1 for r in ranks if r is not None and r <= 3) / len(ranks)
            mrr = sum(1 / r for r in ranks if r is not None) / len(ranks)
            figures[kind] = {"parts": len(ranks), "recall@3": recall3, "mrr@10": mrr}
            lines.append(f"| {name} | {len(ranks)} | {kind} | {recall3:.3f} | {mrr:.3f} |")
        results["sets"][name] = {  # type: ignore[index]
            "chunks": report.chunks, "index_seconds": round(time.perf_counter() - started, 1),
            "figures": figures, "parts": detail,
        }  # fmt: skip
        # The page-level figures of the standard harness, on the same knowledge base.
        subprocess.run(
            [sys.executable, "-m", "citewise", "eval", str(cases_path), "--kb", name,
             "--retrieval-only", "--output", str(output / f"eval-{name}")],
            check=True, env={**os.environ, "CITEWISE_HOME": str(home)},
        )  # fmt: skip
    lines += _prose_baseline(home, settings, output)
    lines += ["", "Parts not in the top 3:", ""]
    for name, data in results["sets"].items():  # type: ignore[attr-defined]
        for part in data["parts"]:
            if part["rank"] is None or part["rank"] > 3:
                lines.append(f"- {name} `{part['case']}` ({part['kind']}): rank {part['rank']}")
    (output / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (output / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


def _prose_baseline(home: Path, settings: Settings, output: Path) -> list[str]:
    """The LGOS dev cases (prose questions) with and without the 212 API sections beside the
    133 Markdown ones, measured in this run: does the API reference crowd out the prose?"""
    lgos = SHARED / "lgos-docs-0.12.0"
    copy = Path(tempfile.mkdtemp(prefix="lgos-no-src-"))
    shutil.copytree(lgos / "docs", copy / "docs")
    shutil.copy(lgos / "zensical.toml", copy / "zensical.toml")  # no src/: no API reference
    site, version = SETS[0][2], SETS[0][3]
    KnowledgeBase("lgos-prose", settings=settings).index_folder(
        copy / "docs", site_url=site, version=version
    )
    cases = SHARED / "lgos-dev-cases.json"
    figures = {}
    for name in ("lgos-prose", "lgos-api"):
        target = output / f"eval-dev-cases-{name}"
        subprocess.run(
            [sys.executable, "-m", "citewise", "eval", str(cases), "--kb", name,
             "--retrieval-only", "--modes", "hybrid", "--output", str(target)],
            check=True, env={**os.environ, "CITEWISE_HOME": str(home)},
        )  # fmt: skip
        data = json.loads((target / "results.json").read_text(encoding="utf-8"))
        figures[name] = data
    (output / "dev-cases-baseline.json").write_text(
        json.dumps(figures, indent=1) + "\n", encoding="utf-8"
    )
    lines = ["", "LGOS dev cases (prose questions; page-level, `citewise eval --retrieval-only`,",
             "hybrid), with and without the API reference, measured in this run:", "",
             "| knowledge base | recall@3 | MRR | ratio of MRR |",
             "| --- | ---: | ---: | ---: |"]  # fmt: skip
    base = figures["lgos-prose"]["modes"]["hybrid"]["figures"]["mrr"]
    for name, label in (("lgos-prose", "Markdown only (baseline)"),
                        ("lgos-api", "Markdown + API reference")):  # fmt: skip
        found = figures[name]["modes"]["hybrid"]["figures"]
        lines.append(f"| {label} | {found['recall@3']:.3f} | {found['mrr']:.3f} | "
                     f"{found['mrr'] / base:.3f} |")  # fmt: skip
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
