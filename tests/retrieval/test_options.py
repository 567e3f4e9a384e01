"""Retrieval options: validation, knowledge-base defaults under request overrides, filters."""

from __future__ import annotations

import pytest

from citewise.errors import ConfigurationError
from citewise.retrieval.options import RetrievalOptions, options_from_json, parse_options
from citewise.store.base import SearchFilter


def test_overrides_apply_over_defaults_and_none_keeps_them() -> None:
    defaults = RetrievalOptions(top_k=3, search_type="full_text", context_window=1)
    merged = defaults.merged({"top_k": 7, "search_type": None, "rerank": "llm"})
    assert (merged.top_k, merged.search_type, merged.context_window, merged.rerank) == (
        7, "full_text", 1, "llm",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"top_k": 0}, "top_k"),
        ({"search_type": "semantic"}, "search_type"),
        ({"query_rewrite": "rag-fusion"}, "query_rewrite"),
        ({"rerank": "colbert"}, "rerank"),
        ({"context_window": 99}, "context_window"),
        ({"k": 3}, "k"),
    ],
)
def test_invalid_options_name_the_field(values: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigurationError, match=f"invalid retrieval options: {field}"):
        parse_options(values)


def test_json_keeps_only_what_differs_and_round_trips() -> None:
    options = RetrievalOptions(top_k=4, rerank="llm")
    assert options.to_json() == '{"top_k":4,"rerank":"llm"}'
    assert options_from_json(options.to_json()) == options
    assert options_from_json(None) == RetrievalOptions()


@pytest.mark.parametrize(
    ("search_type", "mode"), [("hybrid", "hybrid"), ("vector", "vector"), ("full_text", "keyword")]
)
def test_search_types_map_to_search_modes(search_type: str, mode: str) -> None:
    assert parse_options({"search_type": search_type}).mode == mode


def test_filters() -> None:
    assert RetrievalOptions().search_filter() is None
    assert RetrievalOptions(scope="all").search_filter() is None
    assert RetrievalOptions(scope="guide", doc_ids=("a.md",), page_prefix="x/").search_filter() == (
        SearchFilter(scope="guide", page_prefix="x/", doc_ids=("a.md",))
    )


def test_needs_model() -> None:
    assert not RetrievalOptions(rerank="cross_encoder").needs_model
    assert RetrievalOptions(query_rewrite="hyde").needs_model
    assert RetrievalOptions(rerank="llm").needs_model
