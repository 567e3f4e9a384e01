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
    if "page_level" in results:
        lines += [
            "",
            "Page level (a part counts as found when any section of one of its pages is):",
            "",
            "| mode | " + " | ".join(columns) + " |",
            "| --- | " + " | ".join("---:" for _ in columns) + " |",
        ]
        for mode, figures in results["page_level"].items():
            lines.append(f"| {mode} | " + " | ".join(f"{figures[c]:.3f}" for c in columns) + " |")
    for key, label in (("skipped_searches", "planner skipped the search"),
                       ("missing_cases", "no queries recorded")):  # fmt: skip
        if results.get(key):
            lines += ["", f"- {label}: {', '.join(results[key])}"]
    if "planner" in results:
        lines += ["", _planner_line(results["planner"])]
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


def _planner_line(planner: Mapping[str, Any]) -> str:
    skipped = ", ".join(planner["skipped_cases"]) or "none"
    needless = ", ".join(planner["needless_cases"]) or "none"
    return (
        f"- planner: skipped {planner['searches_skipped']} of "
        f"{planner['runs_needing_search']} searches a case needs ({skipped}); searched "
        f"{planner['needless_searches']} of {planner['runs_needing_no_search']} times a case "
        f"needs none ({needless})"
    )


CHECK_COLUMNS = ("searched", "part", "shape", "grounding", "judge_shape", "judge_grounded")


def _case_check(case: Mapping[str, Any], group: str) -> bool | None:
    values = [
        c["passed"]
        for name, c in case["checks"].items()
        if (name == group or (group == "part" and name.startswith("part_")))
        and c["passed"] is not None
    ]
    return None if not values else all(values)


def assistant_report(results: Mapping[str, Any]) -> str:
    """A full evaluation as Markdown: provenance, the per-check scores, one row per case
    (latency, each check, an excerpt of the reply), the failures, and the judge's agreement
    with the deterministic check."""
    from citewise.evaluation.judge import agreement_markdown

    provenance = results["provenance"]
    cases = results["cases"]

    def mark(value: object) -> str:
        return "–" if value is None else ("pass" if value else "**fail**")

    latency = results.get("latency_ms", {})
    lines = [
        f"# Evaluation: {provenance['cases_file']} (assistant)",
        "",
        f"- cases file sha256: `{provenance['cases_sha256']}`",
        f"- knowledge base: `{provenance['kb']}` ({provenance['index'].get('embedder', '?')})",
        f"- model: {provenance.get('model')}"
        + (f" at {provenance['endpoint']}" if provenance.get("endpoint") else "")
        + f"; judge: {provenance.get('judge') or 'none'}",
        f"- runs per case: {provenance.get('runs', 1)}; git commit: "
        f"`{provenance.get('git_commit') or 'unknown'}`",
        f"- command: `{provenance['command']}`",
        *(
            [f"- **cases done: {len(cases)} of {provenance['cases']}** (the run was stopped)"]
            if len(cases) < provenance.get("cases", len(cases))
            else []
        ),
        f"- {len(cases) - len(results['failed_cases'])}/{len(cases)} cases passed "
        "(deterministic checks; the judge scores only"
        + (", here it fails cases too" if provenance.get("fail_on_judge") else "")
        + ")",
        f"- answer latency per run: median {latency.get('median')} ms, p90 "
        f"{latency.get('p90')} ms, max {latency.get('max')} ms"
        + (f"; {provenance['seconds']} s in all" if provenance.get("seconds") else ""),
    ]
    local = provenance.get("local_model")
    if local:
        lines.append(
            f"- local model: {local['threads']} threads ({local['batch_threads']} for the "
            f"prompt), {local['calls']} calls, {local['completion_tokens']} tokens written, "
            f"{local['tokens_per_second']} tokens/s while streaming, "
            f"{local['overall_tokens_per_second']} tokens/s over all calls (prompt reading "
            "included)"
        )
    if "planner" in results:
        lines.append(_planner_line(results["planner"]))
    figures, pages = results.get("figures"), results.get("page_figures")
    if figures:
        recall = f"- planner part recall@10: {figures['recall@10']:.3f}"
        if pages and pages != figures:
            recall += f" at section level, {pages['recall@10']:.3f} at page level"
        lines.append(recall)
    lines += [
        "",
        "## Checks",
        "",
        "| check | kind | passed | failed | rate (per case) | rate (per run) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    per_run = results.get("checks_per_run", {})
    for name, entry in results.get("checks", {}).items():
        run_rate = per_run.get(name, {}).get("rate")
        lines.append(
            f"| {name} | {entry['kind']} | {entry['passed']} | {entry['failed']} "
            f"| {entry['rate']:.3f} | {'–' if run_rate is None else f'{run_rate:.3f}'} |"
        )
    lines += [
        "",
        "## Cases",
        "",
        "| case | latency ms | " + " | ".join(CHECK_COLUMNS) + " | citations | reply |",
        "| --- | ---: | " + " | ".join("---" for _ in CHECK_COLUMNS) + " | ---: | --- |",
    ]
    for case in cases:
        marks = " | ".join(mark(_case_check(case, group)) for group in CHECK_COLUMNS)
        lines.append(
            f"| {case['case']} | {case['median_latency_ms']} | {marks} "
            f"| {case.get('citations', 0)} | {_excerpt(case['reply'])} |"
        )
    problems = [
        (case["case"], name, check["detail"] or name)
        for case in cases
        for name, check in case["checks"].items()
        if check["passed"] is False
    ]
    if problems:
        lines += ["", "## Failed checks", ""]
        for case_id, name, detail in problems:
            lines.append(f"- `{case_id}` {name}: {_excerpt(detail, 300)}")
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
