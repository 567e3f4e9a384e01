"""`citewise eval`: run question cases against a knowledge base and judge the outcome."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citewise.evaluation.assistant import (
    CaseOutcome,
    evaluate_assistant,
    planned_queries,
    planner_figures,
)
from citewise.evaluation.cases import Case, file_sha256, load_cases
from citewise.evaluation.judge import agreement
from citewise.evaluation.report import assistant_report, git_commit, table, write_outputs
from citewise.evaluation.retrieval import (
    MODES,
    RECALL_KS,
    ModeResult,
    PartOutcome,
    evaluate_retrieval,
    first_answering_rank,
    results_json,
)
from citewise.kb import KnowledgeBase
from citewise.models import Hit

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

COLUMNS = [*(f"recall@{k}" for k in RECALL_KS), "mrr"]


# The modes' names in reports (kept from earlier reports) → the search type each measures.
SEARCH_TYPES = {"keyword": "full_text"}


@dataclass
class EvalOutcome:
    results: dict[str, Any]
    text: str
    failed_cases: list[str]
    written: list[Path]


def _provenance(
    cases_path: Path, cases: Sequence[Case], kb: KnowledgeBase, model: str | None, **extra: Any
) -> dict[str, Any]:
    return {
        "cases_file": cases_path.name,
        "cases_sha256": file_sha256(cases_path),
        "cases": len(cases),
        "kb": kb.name,
        "index": kb.meta(),
        "model": model,
        "git_commit": git_commit(),
        "command": shlex.join(_command()),
        **extra,
    }


def _command() -> list[str]:
    """The command line as typed: ``python -m citewise`` and the console script both read
    as ``citewise`` (``sys.argv[0]`` is then a path into the package or the venv)."""
    if sys.argv and Path(sys.argv[0]).name in ("__main__.py", "citewise"):
        return ["citewise", *sys.argv[1:]]
    return list(sys.argv)


def model_name(model: BaseChatModel | None) -> str | None:
    if model is None:
        return None
    return str(getattr(model, "model_name", None) or getattr(model, "model", None) or model)


def run_retrieval_eval(
    cases_path: Path,
    kb: KnowledgeBase,
    *,
    modes: Sequence[str] = MODES,
    runs: int = 1,
    out_dir: Path | None = None,
    model: BaseChatModel | None = None,
) -> EvalOutcome:
    """Evaluate retrieval alone: the query is each case's last user message.

    With a chat model, the queries its planner writes are searched too, as a second figure
    (``planner`` in the results; one structured call per case, no answers). A case fails
    when one of its parts has no answering page among the top-10 sections of the default
    (hybrid, or the last listed) mode.
    """
    cases = load_cases(cases_path)

    def search(query: str, mode: str, scope: str | None) -> list[Hit]:
        return kb.search(query, top_k=10, search_type=SEARCH_TYPES.get(mode, mode), scope=scope)

    by_mode = evaluate_retrieval(cases, search, modes=modes, runs=runs)
    results: dict[str, Any] = {
        "provenance": _provenance(cases_path, cases, kb, model_name(model), runs=runs),
        "modes": results_json(by_mode),
    }
    if model is not None:
        by_mode["planner"] = asyncio.run(_planner_run(cases, kb, model))
        results["modes"]["planner"] = results_json({"planner": by_mode["planner"]})["planner"]
    judged = by_mode["hybrid"] if "hybrid" in by_mode else list(by_mode.values())[0]
    failed = sorted({p.case_id for p in judged.parts if p.rank is None})
    results["failed_cases"] = failed
    rows = {mode: result.figures() for mode, result in by_mode.items()}
    text = table(rows, COLUMNS)
    text += f"\n{len(judged.parts)} parts in {len({p.case_id for p in judged.parts})} cases"
    text += f"; failed ({judged.mode}, not in top 10): {', '.join(failed) or 'none'}"
    written = write_outputs(results, out_dir, COLUMNS) if out_dir is not None else []
    return EvalOutcome(results, text, failed, written)


async def _planner_run(
    cases: Sequence[Case], kb: KnowledgeBase, model: BaseChatModel
) -> ModeResult:
    """Search the planner's queries for each case, merged as the workflow merges them."""
    from citewise.graph.nodes import merge_hits

    parts: list[PartOutcome] = []
    latencies: dict[str, list[float]] = {}
    for case in cases:
        if not case.parts:
            continue
        started = time.perf_counter()
        queries = await planned_queries(model, case)
        hits = merge_hits([kb.search(q, top_k=10, scope=case.scope) for q in queries])
        latencies[case.id] = [time.perf_counter() - started]
        for index, pages in enumerate(case.parts):
            parts.append(PartOutcome(case.id, index, pages, [first_answering_rank(hits, pages)]))
    return ModeResult("planner", parts, latencies)


def _progress(outcome: CaseOutcome) -> None:
    """One line per finished case on stderr: a real model takes minutes per case."""
    seconds = sum(outcome.latencies)
    verdict = "pass" if outcome.passed else "FAIL"
    print(f"{outcome.case.id}: {verdict} ({seconds:.1f} s)", file=sys.stderr, flush=True)


def run_assistant_eval(
    cases_path: Path,
    kb: KnowledgeBase,
    model: BaseChatModel,
    *,
    judge: BaseChatModel | None = None,
    workflow: str = "citewise-rag",
    runs: int = 1,
    out_dir: Path | None = None,
    fail_on_judge: bool = False,
) -> EvalOutcome:
    """Run every case through the answer workflow and check it (and judge it, with a judge:
    its verdicts fail cases only with ``fail_on_judge``)."""
    cases = load_cases(cases_path)
    outcomes = asyncio.run(
        evaluate_assistant(
            cases,
            kb.with_model(model),
            judge=judge,
            workflow=workflow,
            runs=runs,
            fail_on_judge=fail_on_judge,
            progress=_progress,
        )  # fmt: skip
    )
    figures = planner_figures(outcomes)
    failed = [o.case.id for o in outcomes if not o.passed]
    results: dict[str, Any] = {
        "provenance": _provenance(
            cases_path,
            cases,
            kb,
            model_name(model),
            runs=runs,
            workflow=workflow,
            judge=model_name(judge),
            fail_on_judge=fail_on_judge,
        ),
        "figures": figures,
        "cases": [o.json() for o in outcomes],
        "failed_cases": failed,
    }
    if judge is not None:
        results["agreement"] = agreement([(o.check_ok, o.grounding) for o in outcomes])
    lines = [f"{'case':<24} {'result':<6} {'judge':<6} latency  detail"]
    for o in outcomes:
        detail = "; ".join(o.failures + o.judge_failures) or ", ".join(
            q for a in o.answers[:1] for q in a.queries
        )
        latency = o.json()["median_latency_ms"]
        verdict = "-" if judge is None else ("FAIL" if o.judge_failures else "pass")
        result = "pass" if o.passed else "FAIL"
        lines.append(f"{o.case.id:<24} {result:<6} {verdict:<6} {latency:>7}  {detail}")
    lines.append(table({"planner": figures}, COLUMNS))
    lines.append(f"{len(outcomes) - len(failed)}/{len(outcomes)} cases passed")
    if "agreement" in results:
        lines.append(f"judge vs deterministic check: {results['agreement']}")
    written: list[Path] = []
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        written += [out_dir / "results.json", out_dir / "report.md"]
        written[0].write_text(json.dumps(results, indent=2) + "\n")
        written[1].write_text(assistant_report(results))
    return EvalOutcome(results, "\n".join(lines), failed, written)
