"""The diagnostics history's quality figures per window: Top-K fill, citation coverage,
rerank usage and filtered-query rate; and the newest events themselves (hashed entries).

Computed from the entries :mod:`citewise.kb.diagnostics` keeps (no query text), so the
snapshot shows what Prometheus shows (``citewise_topk_fill``, answers without a citation)
and what it does not (how many searches reranked, how many were filtered).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["RECENT_EVENTS", "quality", "recent"]

RECENT_EVENTS = 20
"""How many of the newest events the snapshot lists (the export has all of them)."""


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def quality(events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The window's quality figures (None where no operation counts towards one).

    - ``top_k_fill``: over successful searches, the mean of hits / top_k (capped at 1);
    - ``citation_coverage``: the share of successful answers citing at least one section;
    - ``rerank_rate``: the share of successful searches that reranked their candidates;
    - ``filtered_rate``: the share of searches limited by a scope, documents or a path.
    """
    searches = [e for e in events if e.get("op") == "search" and e.get("outcome") == "ok"]
    answers = [e for e in events if e.get("op") == "answer" and e.get("outcome") == "ok"]
    fills = [
        min(1.0, values["hits"] / values["top_k"])
        for values in (e.get("values") or {} for e in searches)
        if values.get("top_k") and "hits" in values
    ]
    cited = sum(1 for e in answers if (e.get("values") or {}).get("citations", 0) > 0)
    reranked = sum(1 for e in searches if "rerank" in (e.get("stages") or {}))
    filtered = sum(1 for e in searches if (e.get("values") or {}).get("filtered", 0) > 0)
    return {
        "searches": len(searches),
        "answers": len(answers),
        "top_k_fill": round(sum(fills) / len(fills), 4) if fills else None,
        "citation_coverage": _share(cited, len(answers)),
        "rerank_rate": _share(reranked, len(searches)),
        "filtered_rate": _share(filtered, len(searches)),
    }


def recent(events: Sequence[dict[str, Any]], n: int = RECENT_EVENTS) -> list[dict[str, Any]]:
    """The newest ``n`` events, newest first (as kept: subjects hashed, no query text)."""
    return [dict(event) for event in reversed(events[-n:])] if n > 0 else []
