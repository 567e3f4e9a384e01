"""The grounding check's precision and recall on a labelled set of right and wrong answers.

Each item of ``tests/data/grounding-answers.jsonl`` is an answer to a question over the LGOS
0.12.0 index with the sections it was given (section URLs) and a label. The check flags an
answer when ``verification.ok`` is false; a flagged wrong answer is a true positive. The same
run checks the items with a baseline checkout's code (default: /work/main's HEAD, exported
read-only with ``git archive`` into a temporary folder) so the two figures compare::

    python benchmarks/grounding.py --home .home [--baseline-repo /work/main] \\
        [--output benchmarks/grounding]

The LGOS knowledge base ``lgos`` is indexed into ``--home`` from ../shared/data when missing.
Items whose ``split`` is ``held-out`` (every third item) were not used to tune the check; the
figures are given for the tune part, the held-out part and all items.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "grounding-answers.jsonl"
LGOS = REPO.parent / "shared" / "data" / "lgos-docs-0.12.0"
SITE = "https://ilkersigirci.github.io/langgraph-openai-serve/"
VERSION = "0.12.0"
ROOT = f"{SITE}{VERSION}/"

# Run under either codebase (only the API both have: ground(), Verification fields).
RUNNER = r"""
import json, sys, time
from citewise.grounding import ground
from citewise.models import Chunk, Hit

data = json.load(open(sys.argv[1]))
out = []
started = time.perf_counter()
for item in data:
    hits = []
    for n, s in enumerate(item["sections"]):
        chunk = Chunk(chunk_id=s["url"], doc_id=s["page"], position=n, section_index=n,
                      text=s["text"], title=s["title"], heading_path=tuple(s["heading_path"]),
                      anchor=s["url"].partition("#")[2], url=s["url"], page=s["page"])
        hits.append(Hit(chunk, 1.0, ("keyword",)))
    _, v = ground(item["answer"], hits, item["question"], ())
    reasons = [f"name {t}" for t in v.unsupported] + [f"link {u}" for u in v.outside_links]
    reasons += [f"block {b}" for b in v.unsupported_blocks]
    reasons += [f"citation {c.url}" for c in v.citations if not c.supported]
    reasons += [f"{p.kind} {p.text}: {p.detail}" for p in getattr(v, "problems", ())]
    out.append({"id": item["id"], "ok": v.ok, "reasons": reasons})
json.dump({"results": out, "seconds": time.perf_counter() - started}, sys.stdout)
"""


def load_items() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def resolve_sections(items: list[dict[str, Any]], home: Path) -> list[dict[str, Any]]:
    """Each item with its sections' text from the LGOS knowledge base (indexed if missing)."""
    from citewise.config import Settings
    from citewise.kb import KnowledgeBase

    kb = KnowledgeBase("lgos", settings=Settings(home=home))
    if not kb.exists:
        kb.index_folder(LGOS / "docs", site_url=SITE, version=VERSION)
    resolved = []
    for item in items:
        sections = []
        for relative in item["sections"]:
            url = ROOT + relative
            text = kb.section(url)
            if text is None:
                raise SystemExit(f"{item['id']}: no section {url} in the index")
            page = relative.partition("#")[0]
            title = text.lstrip("# ").splitlines()[0] if text.strip() else page
            sections.append(
                {"url": url, "page": page, "text": text, "title": title, "heading_path": [title]}
            )
        resolved.append({**item, "sections": sections})
    return resolved


def run_check(src: Path, payload: Path) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, str(payload)],
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def figures(items: list[dict[str, Any]], flagged: dict[str, bool]) -> dict[str, Any]:
    tp = sum(1 for i in items if i["label"] == "wrong" and flagged[i["id"]])
    fp = sum(1 for i in items if i["label"] == "right" and flagged[i["id"]])
    wrong = sum(1 for i in items if i["label"] == "wrong")
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / wrong if wrong else 1.0
    return {
        "items": len(items),
        "wrong": wrong,
        "flagged_wrong": tp,
        "flagged_right": fp,
        "precision": round(precision, 3),
        "recall": round(recall, 3),
    }


def export_baseline(repo: Path, into: Path) -> tuple[Path, str]:
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", head, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src", head


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--baseline-repo", type=Path, default=Path("/work/main"))
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "grounding")
    args = parser.parse_args()

    items = resolve_sections(load_items(), args.home)
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        payload = Path(tmp) / "items.json"
        payload.write_text(json.dumps(items))
        baseline_src, baseline_head = export_baseline(args.baseline_repo, Path(tmp))
        runs = {
            "baseline": run_check(baseline_src, payload),
            "branch": run_check(REPO / "src", payload),
        }
    report: dict[str, Any] = {
        "command": "python benchmarks/grounding.py --home HOME",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "branch_commit": head,
        "baseline_commit": baseline_head,
        "items": len(items),
        "held_out": [i["id"] for i in items if i["split"] == "held-out"],
        "figures": {},
        "per_class": {},
        "results": {},
    }
    for name, run in runs.items():
        flagged = {r["id"]: not r["ok"] for r in run["results"]}
        report["results"][name] = run["results"]
        report["figures"][name] = {
            split: figures([i for i in items if split == "all" or i["split"] == split], flagged)
            | {"seconds": round(run["seconds"], 2)}
            for split in ("tune", "held-out", "held-out-2", "all")
        }
        classes = sorted({i["class"] for i in items})
        report["per_class"][name] = {
            cls: figures([i for i in items if i["class"] == cls], flagged) for cls in classes
        }
    args.output.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    args.output.with_suffix(".md").write_text(markdown(report, items))
    print(json.dumps(report["figures"], indent=1))


def markdown(report: dict[str, Any], items: list[dict[str, Any]]) -> str:
    lines = [
        "# The grounding check on labelled right and wrong answers",
        "",
        f"- command: `{report['command']}` ({report['date']})",
        f"- branch: `{report['branch_commit'][:12]}`; baseline (main): "
        f"`{report['baseline_commit'][:12]}`, same run, same items and sections",
        f"- items: {report['items']} (`tests/data/grounding-answers.jsonl`); a wrong answer "
        "flagged (`verification.ok` false) is a true positive",
        f"- held out (not used to tune): every third item, {len(report['held_out'])} items",
        "",
        "| code | split | items | wrong | precision | recall on wrong | right flagged |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in ("baseline", "branch"):
        for split, f in report["figures"][name].items():
            lines.append(
                f"| {name} | {split} | {f['items']} | {f['wrong']} | {f['precision']:.3f} | "
                f"{f['recall']:.3f} | {f['flagged_right']} |"
            )
    lines += [
        "",
        "Per class (all items):",
        "",
        "| class | items | wrong | baseline recall | "
        "branch recall | baseline right flagged | branch right flagged |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for cls, f in report["per_class"]["branch"].items():
        b = report["per_class"]["baseline"][cls]
        lines.append(
            f"| {cls} | {f['items']} | {f['wrong']} | {b['recall']:.3f} | {f['recall']:.3f} | "
            f"{b['flagged_right']} | {f['flagged_right']} |"
        )
    lines += [
        "",
        "Each item (✗ flagged):",
        "",
        "| id | split | label | class | main | branch | branch's first reason |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    base = {r["id"]: r for r in report["results"]["baseline"]}
    for result in report["results"]["branch"]:
        item = next(i for i in items if i["id"] == result["id"])
        reason = (result["reasons"] or [""])[0].replace("|", "\\|").replace("\n", " ")[:110]
        lines.append(
            f"| {item['id']} | {item['split']} | {item['label']} | {item['class']} | "
            f"{'✗' if not base[item['id']]['ok'] else '✓'} | {'✗' if not result['ok'] else '✓'} | "
            f"{reason} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
