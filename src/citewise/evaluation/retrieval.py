"""Retrieval-only evaluation of question cases: where the first answering page ranks, per mode."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from citewise.evaluation.cases import Case
from citewise.models import Hit

RECALL_KS = (1, 3, 5, 10)
MODES = ("vector", "keyword", "hybrid")

# (query, mode, scope) -> hits, best first; KnowledgeBase.search fits.
Searcher = Callable[[str, str, str | None], list[Hit]]


def first_answering_rank(hits: Sequence[Hit], targets: Sequence[str]) -> int | None:
    """1-based rank of the first retrieved section that is one of ``targets`` (None if
    absent): a ``page#anchor`` target is that section, a bare page any section on it."""
    pages = {t for t in targets if "#" not in t}
    sections = {tuple(t.split("#", 1)) for t in targets if "#" in t}
    for rank, hit in enumerate(hits, start=1):
        chunks = (hit.chunk, *hit.also)
        if hit.chunk.page in pages or any((c.page, c.anchor) in sections for c in chunks):
            return rank
    return None


def recall_and_mrr(ranks: Sequence[int | None], ks: Sequence[int] = RECALL_KS) -> dict[str, float]:
    """Part recall@k (share of parts answered within the top k) and MRR over parts."""
    if not ranks:
        return {**{f"recall@{k}": 0.0 for k in ks}, "mrr": 0.0}
    figures = {f"recall@{k}": sum(r is not None and r <= k for r in ranks) / len(ranks) for k in ks}
    figures["mrr"] = sum(1 / r for r in ranks if r is not None) / len(ranks)
    return figures


@dataclass
class PartOutcome:
    """Where one part of one case was found, in each run."""

    case_id: str
    part: int
    pages: tuple[str, ...]
    ranks: list[int | None] = field(default_factory=list)

    @property
    def rank(self) -> int | None:
        """The median rank over runs (retrieval is deterministic, so runs normally agree)."""
        found = [r for r in self.ranks if r is not None]
        if len(found) * 2 <= len(self.ranks) - 1 or not found:
            return None
        return int(statistics.median_low(found))


@dataclass
class ModeResult:
    mode: str
    parts: list[PartOutcome]
    latencies: dict[str, list[float]]

    def figures(self) -> dict[str, float]:
        return recall_and_mrr([p.rank for p in self.parts])

    def curve(self, max_k: int = 10) -> list[float]:
        """Part recall@k for k = 1..max_k (the plot)."""
        ranks = [p.rank for p in self.parts]
        return [recall_and_mrr(ranks, [k])[f"recall@{k}"] for k in range(1, max_k + 1)]

    def median_latency_ms(self) -> dict[str, float]:
        return {case: round(1000 * statistics.median(s), 2) for case, s in self.latencies.items()}


def evaluate_retrieval(
    cases: Sequence[Case],
    search: Searcher,
    *,
    modes: Sequence[str] = MODES,
    runs: int = 1,
    level: str = "section",
) -> dict[str, ModeResult]:
    """Search each case's last user message in each mode, ``runs`` times.

    ``level`` ``section`` looks for each part's sections where the case names them
    (``Case.targets``), ``page`` for its pages.

    Cases without parts (small talk, off-topic) have nothing to find and are left out: whether
    the assistant searches for them at all is the planner's business, checked by the full run.
    """
    results: dict[str, ModeResult] = {}
    for mode in modes:
        outcomes: list[PartOutcome] = []
        latencies: dict[str, list[float]] = {}
        for case in cases:
            if not case.parts:
                continue
            wanted = case.targets if level == "section" else case.parts
            parts = [PartOutcome(case.id, i, pages) for i, pages in enumerate(wanted)]
            for _ in range(runs):
                started = time.perf_counter()
                hits = search(case.question, mode, case.scope)
                latencies.setdefault(case.id, []).append(time.perf_counter() - started)
                for part in parts:
                    part.ranks.append(first_answering_rank(hits, part.pages))
            outcomes.extend(parts)
        results[mode] = ModeResult(mode, outcomes, latencies)
    return results


def results_json(results: dict[str, ModeResult]) -> dict[str, Any]:
    return {
        mode: {
            "figures": result.figures(),
            "recall_curve": result.curve(),
            "median_latency_ms": result.median_latency_ms(),
            "parts": [
                {"case": p.case_id, "part": p.part, "pages": list(p.pages), "ranks": p.ranks}
                for p in result.parts
            ],
        }
        for mode, result in results.items()
    }
