"""Retrieval options: what one search may ask for, with a knowledge base's defaults underneath."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citewise.errors import ConfigurationError
from citewise.store.base import SearchFilter

SearchType = Literal["hybrid", "vector", "full_text"]
QueryRewrite = Literal["off", "hyde", "multi_query", "step_back"]
Rerank = Literal["off", "cross_encoder", "llm"]

# The API's names for the search modes of retrieval.hybrid (full_text is FTS5 BM25).
SEARCH_MODES: dict[str, str] = {"hybrid": "hybrid", "vector": "vector", "full_text": "keyword"}
MAX_TOP_K = 100
MAX_CONTEXT_WINDOW = 5


class RetrievalOptions(BaseModel):
    """How to search: per request, over the knowledge base's defaults.

    Args:
        top_k: how many hits to return.
        search_type: ``hybrid`` (dense + BM25, fused), ``vector`` or ``full_text`` (BM25).
        query_rewrite: ``off``; ``hyde`` (also search a passage a chat model writes as the
            answer); ``multi_query`` (also search rephrasings); ``step_back`` (also search a
            more general question). Every phrasing's results are fused by RRF.
        rerank: ``off``; ``cross_encoder`` (a local ONNX model, ``CITEWISE_RERANKER_DIR``);
            ``llm`` (a chat model orders the candidates).
        rerank_candidates: how many fused candidates the reranker sees.
        context_window: append up to N neighbouring chunks of the same section to each hit.
        scope / doc_ids / page_prefix: metadata filters (see ``SearchFilter``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    top_k: int = Field(default=10, ge=1, le=MAX_TOP_K)
    search_type: SearchType = "hybrid"
    query_rewrite: QueryRewrite = "off"
    rerank: Rerank = "off"
    rerank_candidates: int = Field(default=20, ge=1, le=MAX_TOP_K)
    context_window: int = Field(default=0, ge=0, le=MAX_CONTEXT_WINDOW)
    scope: str | None = None
    doc_ids: tuple[str, ...] | None = None
    page_prefix: str | None = None

    @property
    def mode(self) -> str:
        """The ``retrieval.search`` mode for ``search_type``."""
        return SEARCH_MODES[self.search_type]

    @property
    def needs_model(self) -> bool:
        """True when a chat model takes part (a query rewrite or the LLM reranker)."""
        return self.query_rewrite != "off" or self.rerank == "llm"

    def search_filter(self) -> SearchFilter | None:
        if self.scope in (None, "", "all") and self.doc_ids is None and not self.page_prefix:
            return None
        scope = None if self.scope in (None, "", "all") else self.scope
        return SearchFilter(scope=scope, page_prefix=self.page_prefix, doc_ids=self.doc_ids)

    def merged(self, overrides: Mapping[str, Any] | None) -> RetrievalOptions:
        """These options with ``overrides`` applied (``None`` values keep the default)."""
        changes = {key: value for key, value in (overrides or {}).items() if value is not None}
        return parse_options({**self.model_dump(), **changes})

    def to_json(self) -> str:
        """The options that differ from the built-in defaults, as compact JSON (KB meta)."""
        return json.dumps(self.model_dump(exclude_defaults=True), separators=(",", ":"))


def parse_options(values: Mapping[str, Any]) -> RetrievalOptions:
    """Validated options; a bad value raises ConfigurationError naming the field."""
    try:
        return RetrievalOptions.model_validate(dict(values))
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'options'}: {e['msg']}" for e in error.errors()
        )
        raise ConfigurationError(f"invalid retrieval options: {problems}") from None


def options_from_json(text: str | None) -> RetrievalOptions:
    """Options stored by :meth:`RetrievalOptions.to_json` (the built-in defaults for none)."""
    if not text:
        return RetrievalOptions()
    try:
        values = json.loads(text)
    except ValueError as error:
        raise ConfigurationError(f"stored retrieval options are not JSON: {error}") from None
    if not isinstance(values, dict):
        raise ConfigurationError("stored retrieval options must be a JSON object")
    return parse_options(values)
