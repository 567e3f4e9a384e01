"""Planner query sets: written by every run with a model, replayed through each search type
without one.

A run with a chat model writes ``queries.json`` beside its results: per case, the queries
its planner wrote in each run. ``citewise eval CASES --replay queries.json`` searches those
queries again with every search type (hybrid, dense, keyword, hybrid with the cross-encoder
where one is configured), merged as the workflow merges them, and reports per-part recall
per mode: retrieval modes compared on what a real planner asks, with no model loaded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citewise.config import ServiceSettings
from citewise.errors import SourceError
from citewise.evaluation.cases import Case
from citewise.evaluation.retrieval import ModeResult, PartOutcome, first_answering_rank
from citewise.models import Hit

QUERIES_FORMAT = "citewise-planner-queries/1"

# Replay mode → the search options it sets.
REPLAY_MODES: dict[str, dict[str, Any]] = {
    "hybrid": {"search_type": "hybrid"},
    "vector": {"search_type": "vector"},
    "keyword": {"search_type": "full_text"},
    "hybrid+rerank": {"search_type": "hybrid", "rerank": "cross_encoder"},
}

# (query, options, scope) -> hits, best first.
ReplaySearcher = Callable[[str, dict[str, Any], str | None], list[Hit]]


@dataclass(frozen=True)
class QuerySet:
    """The planner's queries for one case, one list per run (an empty list: no search)."""

    case: str
    runs: tuple[tuple[str, ...], ...]


def queries_json(
    sets: Sequence[QuerySet], *, model: str | None, cases_file: str, **provenance: Any
) -> dict[str, Any]:
    return {
        "format": QUERIES_FORMAT,
        "model": model,
        "cases_file": cases_file,
        **provenance,
        "cases": [{"case": s.case, "runs": [list(run) for run in s.runs]} for s in sets],
    }


def write_queries(path: Path, document: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_queries(path: Path) -> tuple[dict[str, Any], dict[str, QuerySet]]:
    """Read a queries file (its header, and the sets by case id); errors say what is wrong."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SourceError(f"queries file not found: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SourceError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(raw, dict) or raw.get("format") != QUERIES_FORMAT:
        raise SourceError(
            f'{path}: not a planner queries file (expected "format": {QUERIES_FORMAT!r}; '
            "a run with a model writes one as queries.json beside its results)"
        )
    entries = raw.get("cases")
    if not isinstance(entries, list):
        raise SourceError(f'{path}: "cases" must be a list')
    sets: dict[str, QuerySet] = {}
    for index, entry in enumerate(entries):
        runs = entry.get("runs") if isinstance(entry, dict) else None
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("case"), str)
            or not isinstance(runs, list)
            or not all(isinstance(r, list) and all(isinstance(q, str) for q in r) for r in runs)
        ):
            raise SourceError(
                f'{path}: entry {index} must be {{"case": id, "runs": [[query, ...], ...]}}'
            )
        sets[entry["case"]] = QuerySet(entry["case"], tuple(tuple(run) for run in runs))
    header = {key: value for key, value in raw.items() if key != "cases"}
    return header, sets


def available_modes(reranker_configured: bool | None = None) -> list[str]:
    """Every replay mode this machine can run: the cross-encoder only where one is set."""
    if reranker_configured is None:
        reranker_configured = bool(ServiceSettings.from_env().reranker_dir)
    return [mode for mode in REPLAY_MODES if reranker_configured or "rerank" not in mode]


@dataclass
class ReplayResult:
    """Per mode, the part outcomes at section level (the case's sections where it names
    them) and at page level; and the cases the file had no queries for."""

    sections: dict[str, ModeResult]
    pages: dict[str, ModeResult]
    skipped_searches: list[str]
    missing: list[str]


def replay(
    cases: Sequence[Case],
    sets: dict[str, QuerySet],
    search: ReplaySearcher,
    *,
    modes: Sequence[str],
    top_k: int = 10,
) -> ReplayResult:
    """Search every recorded query set of every case with parts in each mode, merging a set's
    queries' hits as the workflow does; a run that planned no search finds nothing."""
    from citewise.graph.nodes import merge_hits

    sections: dict[str, ModeResult] = {}
    pages: dict[str, ModeResult] = {}
    missing = [case.id for case in cases if case.parts and case.id not in sets]
    skipped = sorted(
        {c.id for c in cases if c.parts and c.id in sets for run in sets[c.id].runs if not run}
    )
    for mode in modes:
        options = {**REPLAY_MODES[mode], "top_k": top_k}
        by_section: list[PartOutcome] = []
        by_page: list[PartOutcome] = []
        for case in cases:
            if not case.parts or case.id not in sets:
                continue
            section_parts = [PartOutcome(case.id, i, t) for i, t in enumerate(case.targets)]
            page_parts = [PartOutcome(case.id, i, p) for i, p in enumerate(case.parts)]
            for run in sets[case.id].runs:
                hits = merge_hits([search(query, options, case.scope) for query in run])
                for part in section_parts + page_parts:
                    part.ranks.append(first_answering_rank(hits, part.pages))
            by_section.extend(section_parts)
            by_page.extend(page_parts)
        sections[mode] = ModeResult(mode, by_section, {})
        pages[mode] = ModeResult(mode, by_page, {})
    return ReplayResult(sections, pages, skipped, missing)


def replay_results_json(result: ReplayResult) -> dict[str, Any]:
    def mode_json(outcome: ModeResult) -> dict[str, Any]:
        return {
            "figures": outcome.figures(),
            "recall_curve": outcome.curve(),
            "median_latency_ms": {},
            "parts": [
                {"case": p.case_id, "part": p.part, "pages": list(p.pages), "ranks": p.ranks}
                for p in outcome.parts
            ],
        }

    return {
        "modes": {mode: mode_json(outcome) for mode, outcome in result.sections.items()},
        "page_level": {mode: o.figures() for mode, o in result.pages.items()},
        "skipped_searches": result.skipped_searches,
        "missing_cases": result.missing,
    }
