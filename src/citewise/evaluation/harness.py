"""`citewise eval`: run question cases against a knowledge base and judge the outcome."""

from __future__ import annotations

import asyncio
import json
import shlex
import statistics
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
from citewise.evaluation.checks import aggregate
from citewise.evaluation.judge import agreement
from citewise.evaluation.replay import (
    QuerySet,
    ReplayResult,
    available_modes,
    load_queries,
    queries_json,
    replay,
    replay_results_json,
    write_queries,
)
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
    if any(case.anchors is not None for case in cases):
        by_page = evaluate_retrieval(cases, search, modes=modes, runs=1, level="page")
        results["page_level"] = {mode: result.figures() for mode, result in by_page.items()}
    query_sets: list[QuerySet] = []
    if model is not None:
        failures: dict[str, str] = {}
        by_mode["planner"] = asyncio.run(_planner_run(cases, kb, model, query_sets, failures))
        results["modes"]["planner"] = results_json({"planner": by_mode["planner"]})["planner"]
        results["planner"] = planner_behaviour(cases, query_sets)
        # A failed plan searched the message as written (the workflow's fallback).
        results["planner"]["failed_plans"] = failures
    judged = by_mode["hybrid"] if "hybrid" in by_mode else list(by_mode.values())[0]
    failed = sorted({p.case_id for p in judged.parts if p.rank is None})
    results["failed_cases"] = failed
    rows = {mode: result.figures() for mode, result in by_mode.items()}
    text = table(rows, COLUMNS)
    text += f"\n{len(judged.parts)} parts in {len({p.case_id for p in judged.parts})} cases"
    text += f"; failed ({judged.mode}, not in top 10): {', '.join(failed) or 'none'}"
    if "page_level" in results:
        text += "\npage level (a part found when any section of its page is):\n"
        text += table(results["page_level"], COLUMNS)
    written = write_outputs(results, out_dir, COLUMNS) if out_dir is not None else []
    if out_dir is not None and model is not None:
        written.append(_write_queries(out_dir, query_sets, cases_path, model))
    return EvalOutcome(results, text, failed, written)


def _write_queries(
    out_dir: Path, sets: Sequence[QuerySet], cases_path: Path, model: BaseChatModel
) -> Path:
    document = queries_json(
        sets, model=model_name(model), cases_file=cases_path.name,
        cases_sha256=file_sha256(cases_path), git_commit=git_commit(),
    )  # fmt: skip
    return write_queries(out_dir / "queries.json", document)


def planner_behaviour(cases: Sequence[Case], sets: Sequence[QuerySet]) -> dict[str, Any]:
    """How the planner behaved over the cases' runs: searches it skipped for cases that need
    one, searches it made for cases that need none (small talk, vague, unrelated)."""
    from citewise.evaluation.checks import expects_search

    by_id = {s.case: s for s in sets}
    needing = [c for c in cases if expects_search(c) and c.id in by_id]
    chat = [c for c in cases if not expects_search(c) and c.id in by_id]
    skipped = [c.id for c in needing for run in by_id[c.id].runs if not run]
    needless = [c.id for c in chat for run in by_id[c.id].runs if run]
    return {
        "runs_needing_search": sum(len(by_id[c.id].runs) for c in needing),
        "searches_skipped": len(skipped),
        "skipped_cases": sorted(set(skipped)),
        "runs_needing_no_search": sum(len(by_id[c.id].runs) for c in chat),
        "needless_searches": len(needless),
        "needless_cases": sorted(set(needless)),
    }


async def _planner_run(
    cases: Sequence[Case], kb: KnowledgeBase, model: BaseChatModel, sets: list[QuerySet],
    failures: dict[str, str],
) -> ModeResult:  # fmt: skip
    """Search the planner's queries for each case, merged as the workflow merges them; every
    case is planned (a planner that searches for small talk shows in ``sets``; one whose
    plan failed is in ``failures``, with why)."""
    from citewise.graph.nodes import merge_hits

    parts: list[PartOutcome] = []
    latencies: dict[str, list[float]] = {}
    for case in cases:
        started = time.perf_counter()
        queries, failure = await planned_queries(model, case)
        if failure is not None:
            failures[case.id] = failure
        sets.append(QuerySet(case.id, (tuple(queries),)))
        how = f" (planning failed: {failure}; the message as written)" if failure else ""
        print(f"{case.id}: {queries}{how}", file=sys.stderr, flush=True)
        if not case.parts:
            continue
        hits = merge_hits([kb.search(q, top_k=10, scope=case.scope) for q in queries])
        latencies[case.id] = [time.perf_counter() - started]
        for index, wanted in enumerate(case.targets):
            parts.append(PartOutcome(case.id, index, wanted, [first_answering_rank(hits, wanted)]))
    return ModeResult("planner", parts, latencies)


def _progress(outcome: CaseOutcome) -> None:
    """One line per finished case on stderr: a real model takes minutes per case."""
    seconds = sum(outcome.latencies)
    verdict = "pass" if outcome.passed else "FAIL"
    failed = [c.name for c in outcome.checks if c.passed is False]
    detail = f" failed: {', '.join(failed)}" if failed else ""
    print(f"{outcome.case.id}: {verdict} ({seconds:.1f} s){detail}", file=sys.stderr, flush=True)


def model_stats(model: BaseChatModel | None) -> dict[str, Any] | None:
    """Threads and tokens/s of a local model (None for an endpoint, which does not say)."""
    stats = getattr(model, "stats", None)
    if model is None or stats is None or not hasattr(stats, "as_json"):
        return None
    figures: dict[str, Any] = stats.as_json()
    return {
        "threads": getattr(model, "threads", None),
        "batch_threads": getattr(model, "batch_threads", None),
        **figures,
    }


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
    endpoint: str | None = None,
) -> EvalOutcome:
    """Run every case through the answer workflow, score each check of each run, and judge
    the first answer with a judge (its verdicts fail cases only with ``fail_on_judge``).

    With ``out_dir``: results.json, report.md and queries.json (the planner's queries, for
    ``--replay``)."""
    cases = load_cases(cases_path)
    started = time.perf_counter()
    done: list[CaseOutcome] = []
    commit = git_commit()  # the code that runs: the checkout may move while a long run goes

    def results_of(outcomes: Sequence[CaseOutcome]) -> dict[str, Any]:
        failed = [o.case.id for o in outcomes if not o.passed]
        sets = [QuerySet(o.case.id, tuple(tuple(a.queries) for a in o.answers)) for o in outcomes]
        latencies = [seconds for o in outcomes for seconds in o.latencies]
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
                endpoint=endpoint,
                local_model=model_stats(model),
                seconds=round(time.perf_counter() - started, 1),
                finished=len(outcomes),
            )
            | {"git_commit": commit},
            "checks": aggregate(o.checks for o in outcomes),
            "checks_per_run": aggregate(run for o in outcomes for run in o.run_checks),
            "figures": planner_figures(outcomes),
            "page_figures": planner_figures(outcomes, level="page"),
            "planner": planner_behaviour([o.case for o in outcomes], sets),
            "latency_ms": _latency_summary(latencies),
            "cases": [o.json() for o in outcomes],
            "failed_cases": failed,
        }
        if judge is not None:
            results["agreement"] = agreement([(o.check_ok, o.grounding) for o in outcomes])
        return results

    def write(outcomes: Sequence[CaseOutcome]) -> list[Path]:
        """Every output again: a run of minutes per case that stops keeps what finished."""
        if out_dir is None:
            return []
        results = results_of(outcomes)
        sets = [QuerySet(o.case.id, tuple(tuple(a.queries) for a in o.answers)) for o in outcomes]
        out_dir.mkdir(parents=True, exist_ok=True)
        written = [out_dir / "results.json", out_dir / "report.md"]
        written[0].write_text(json.dumps(results, indent=2) + "\n")
        written[1].write_text(assistant_report(results))
        written.append(_write_queries(out_dir, sets, cases_path, model))
        return written

    def progress(outcome: CaseOutcome) -> None:
        _progress(outcome)
        done.append(outcome)
        if len(done) < len(cases):
            write(done)

    outcomes = asyncio.run(
        evaluate_assistant(
            cases,
            kb.with_model(model),
            judge=judge,
            workflow=workflow,
            runs=runs,
            fail_on_judge=fail_on_judge,
            progress=progress,
        )  # fmt: skip
    )
    results = results_of(outcomes)
    failed = results["failed_cases"]
    text = _assistant_text(outcomes, results, judged=judge is not None)
    written = write(outcomes)
    return EvalOutcome(results, text, failed, written)


def _latency_summary(seconds: Sequence[float]) -> dict[str, float | None]:
    if not seconds:
        return {"median": None, "p90": None, "max": None}
    ordered = sorted(seconds)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return {
        "median": round(1000 * statistics.median(ordered), 1),
        "p90": round(1000 * p90, 1),
        "max": round(1000 * ordered[-1], 1),
    }


def _assistant_text(
    outcomes: Sequence[CaseOutcome], results: dict[str, Any], *, judged: bool
) -> str:
    lines = [f"{'case':<28} {'result':<6} latency  failed checks / queries"]
    for o in outcomes:
        failed = [f"{c.name}: {c.detail}" for c in o.checks if c.passed is False]
        detail = "; ".join(failed) or ", ".join(q for a in o.answers[:1] for q in a.queries)
        latency = o.json()["median_latency_ms"]
        result = "pass" if o.passed else "FAIL"
        lines.append(f"{o.case.id:<28} {result:<6} {latency:>7}  {detail}")
    lines.append("")
    lines.append(f"{'check':<16} {'passed':>7} {'failed':>7} {'rate':>6}")
    for name, entry in results["checks"].items():
        lines.append(f"{name:<16} {entry['passed']:>7} {entry['failed']:>7} {entry['rate']:>6.3f}")
    lines.append(table({"planner": results["figures"]}, COLUMNS))
    lines.append(f"{len(outcomes) - len(results['failed_cases'])}/{len(outcomes)} cases passed")
    if judged and "agreement" in results:
        lines.append(f"judge vs deterministic check: {results['agreement']}")
    return "\n".join(lines)


def run_replay_eval(
    cases_path: Path,
    queries_path: Path,
    kb: KnowledgeBase,
    *,
    modes: Sequence[str] | None = None,
    out_dir: Path | None = None,
) -> EvalOutcome:
    """Replay a queries file's planner query sets through every search type, no model.

    A case fails when one of its parts is not found (top 10) in the first mode."""
    cases = load_cases(cases_path)
    header, sets = load_queries(queries_path)
    chosen = list(modes) if modes else available_modes(_reranker_configured(kb))

    def search(query: str, options: dict[str, Any], scope: str | None) -> list[Hit]:
        return kb.search(query, scope=scope, **options)

    result = replay(cases, sets, search, modes=chosen)
    results: dict[str, Any] = {
        "provenance": _provenance(
            cases_path,
            cases,
            kb,
            header.get("model"),
            replay=queries_path.name,
            replay_sha256=file_sha256(queries_path),
            planner_model=header.get("model"),
        ),  # fmt: skip
        **replay_results_json(result),
    }
    first = result.sections[chosen[0]]
    failed = sorted({p.case_id for p in first.parts if p.rank is None})
    results["failed_cases"] = failed
    text = _replay_text(result, header, failed)
    written = write_outputs(results, out_dir, COLUMNS) if out_dir is not None else []
    return EvalOutcome(results, text, failed, written)


def _reranker_configured(kb: KnowledgeBase) -> bool | None:
    """True when the knowledge base names a cross-encoder; None: ask the environment."""
    return True if kb.config.defaults.reranker_dir else None


def _replay_text(result: ReplayResult, header: dict[str, Any], failed: list[str]) -> str:
    sections = {mode: r.figures() for mode, r in result.sections.items()}
    pages = {mode: r.figures() for mode, r in result.pages.items()}
    parts = next(iter(result.sections.values())).parts if result.sections else []
    lines = [
        f"replayed planner queries of {header.get('model') or 'an unnamed model'} "
        f"({len(parts)} parts)",
        table(sections, COLUMNS),
    ]
    if pages != sections:
        lines += [
            "page level (a part found when any section of its page is):",
            table(pages, COLUMNS),
        ]
    if result.skipped_searches:
        lines.append(f"planner skipped the search: {', '.join(result.skipped_searches)}")
    if result.missing:
        lines.append(f"no queries recorded for: {', '.join(result.missing)}")
    lines.append(f"failed (first mode, not in top 10): {', '.join(failed) or 'none'}")
    return "\n".join(lines)
