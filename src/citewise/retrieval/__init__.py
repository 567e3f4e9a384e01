"""Retrieval: hybrid dense + BM25 search and reciprocal rank fusion."""

from __future__ import annotations

from citewise.retrieval.fusion import reciprocal_rank_fusion, relative_score_rrf
from citewise.retrieval.hybrid import search, search_many

__all__ = ["reciprocal_rank_fusion", "relative_score_rrf", "search", "search_many"]
