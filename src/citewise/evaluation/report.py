"""Eval output: a terminal table, results.json with provenance, a Markdown report and a plot."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from citewise.errors import MissingExtraError


def git_commit(cwd: Path | None = None) -> str | None:
    """The checked-out commit of the working directory's repository, if there is one."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=cwd, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def table(rows: Mapping[str, Mapping[str, float]], columns: list[str]) -> str:
    """A fixed-width text table: one row per mode, one column per figure."""
    width = max(12, *(len(name) for name in rows))
    lines = [f"{'mode':<{width}} " + " ".join(f"{c:>10}" for c in columns)]
    for name, figures in rows.items():
        lines.append(f"{name:<{width}} " + " ".join(f"{figures[c]:>10.3f}" for c in columns))
    return "\n".join(lines)


def markdown_report(results: Mapping[str, Any], columns: list[str]) -> str:
    """The report as Markdown: provenance, the figures side by side, then misses per mode."""
    provenance = results["provenance"]
    lines = [
        f"# Evaluation: {provenance['cases_file']}",
        "",
        f"- cases file sha256: `{provenance['cases_sha256']}`",
        f"- knowledge base: `{provenance['kb']}` ({provenance['index'].get('embedder', '?')})",
        f"- model: {provenance.get('model') or 'none (retrieval only)'}",
        f"- git commit: `{provenance.get('git_commit') or 'unknown'}`",
        f"- command: `{provenance['command']}`",
        "",
        "| mode | " + " | ".join(columns) + " |",
        "| --- | " + " | ".join("---:" for _ in columns) + " |",
    ]
    for mode, result in results["modes"].items():
        figures = result["figures"]
        lines.append(f"| {mode} | " + " | ".join(f"{figures[c]:.3f}" for c in columns) + " |")
    for mode, result in results["modes"].items():
        misses = [p for p in result["parts"] if not p["ranks"] or p["ranks"][0] is None]
        late = [p for p in result["parts"] if p["ranks"] and (p["ranks"][0] or 0) > 3]
        if misses or late:
            lines += ["", f"## {mode}: parts not in the top 3", ""]
            for part in misses + late:
                lines.append(f"- `{part['case']}` part {part['part']}: rank {part['ranks'][0]}")
    return "\n".join(lines) + "\n"


def _excerpt(text: str | None, limit: int = 160) -> str:
    flat = " ".join((text or "").split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def assistant_report(results: Mapping[str, Any]) -> str:
    """A full evaluation as Markdown: provenance, one row per case (latency, each check, an
    excerpt of the reply), and the judge's agreement with the deterministic check."""
    from citewise.evaluation.judge import agreement_markdown

    provenance = results["provenance"]
    cases = results["cases"]
    judged = provenance.get("judge") is not None

    def mark(value: object) -> str:
        return "–" if value is None else ("pass" if value else "**fail**")

    lines = [
        f"# Evaluation: {provenance['cases_file']} (assistant)",
        "",
        f"- cases file sha256: `{provenance['cases_sha256']}`",
        f"- knowledge base: `{provenance['kb']}` ({provenance['index'].get('embedder', '?')})",
        f"- model: {provenance.get('model')}; judge: {provenance.get('judge') or 'none'}",
        f"- git commit: `{provenance.get('git_commit') or 'unknown'}`",
        f"- command: `{provenance['command']}`",
        f"- {len(cases) - len(results['failed_cases'])}/{len(cases)} cases passed",
        "",
        "| case | latency ms | retrieval | grounding check | judge: grounded | judge: shape "
        "| citations | reply |",
        "| --- | ---: | --- | --- | --- | --- | ---: | --- |",
    ]
    for case in cases:
        retrieval = not any(
            f.startswith(("part ", "did not search", "searched")) for f in case["failures"]
        )
        grounding = case.get("grounding_judge")
        judge_grounded = None if grounding is None or grounding["error"] else grounding["passed"]
        shape = None
        if judged and case["judge"]:
            shape = not case["judge"][0].startswith("no")
        lines.append(
            f"| {case['case']} | {case['median_latency_ms']} | {mark(retrieval)} "
            f"| {mark(case.get('grounding_check'))} | {mark(judge_grounded)} | {mark(shape)} "
            f"| {case.get('citations', 0)} | {_excerpt(case['reply'])} |"
        )
    problems = [c for c in cases if c["failures"] or c.get("judge_failures")]
    if problems:
        lines += ["", "## Failures", ""]
        for case in problems:
            for failure in dict.fromkeys(case["failures"] + case.get("judge_failures", [])):
                lines.append(f"- `{case['case']}`: {_excerpt(failure, 300)}")
    if "agreement" in results:
        lines += ["", "## Grounded judge against the deterministic check", ""]
        lines.append(agreement_markdown(results["agreement"]))
    return "\n".join(lines) + "\n"


def plot_recall(curves: Mapping[str, list[float]], path: Path, title: str) -> None:
    """A PNG of part recall@k for k = 1..10, one line per mode."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError("matplotlib", "eval", "The recall plot") from None
    figure, axes = plt.subplots(figsize=(6, 4), dpi=100)
    for mode, curve in curves.items():
        axes.plot(range(1, len(curve) + 1), curve, marker="o", label=mode)
    axes.set_xlabel("k (retrieved sections)")
    axes.set_ylabel("part recall@k")
    axes.set_ylim(0, 1.05)
    axes.set_xticks(range(1, 11))
    axes.grid(alpha=0.3)
    axes.legend()
    axes.set_title(title)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def write_outputs(results: Mapping[str, Any], out_dir: Path, columns: list[str]) -> list[Path]:
    """Write results.json, report.md and recall.png into ``out_dir``; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "results.json", out_dir / "report.md", out_dir / "recall.png"]
    written[0].write_text(json.dumps(results, indent=2) + "\n")
    written[1].write_text(markdown_report(results, columns))
    curves = {mode: r["recall_curve"] for mode, r in results["modes"].items()}
    plot_recall(curves, written[2], f"Part recall@k: {results['provenance']['cases_file']}")
    return written
