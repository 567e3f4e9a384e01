"""Search options: validation, knowledge-base defaults under request overrides, filters, and
open names for query rewrites and rerankers."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from citewise.errors import ConfigurationError
from citewise.models import SearchFilter
from citewise.options import (
    OPTION_NAMES,
    OptionsError,
    SearchOptions,
    options_from_json,
    parse_options,
)


def test_overrides_apply_over_defaults_and_none_keeps_them() -> None:
    defaults = SearchOptions(top_k=3, search_type="full_text", context_window=1)
    merged = defaults.merged({"top_k": 7, "search_type": None, "rerank": "llm"})
    assert (merged.top_k, merged.search_type, merged.context_window, merged.rerank) == (
        7, "full_text", 1, "llm",
    )  # fmt: skip
    # Another SearchOptions overrides only the fields set on it.
    assert defaults.merged(SearchOptions(top_k=2)) == SearchOptions(
        top_k=2, search_type="full_text", context_window=1
    )


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"top_k": 0}, "top_k"),
        ({"search_type": "semantic"}, "search_type"),
        ({"query_rewrite": "rag fusion"}, "query_rewrite"),
        ({"rerank": ""}, "rerank"),
        ({"rerank": "x" * 101}, "rerank"),
        ({"context_window": 99}, "context_window"),
        ({"candidates_per_ranker": 0}, "candidates_per_ranker"),
        ({"context_scope": "site"}, "context_scope"),
        ({"collapse_sections": "sometimes"}, "collapse_sections"),
        ({"kk": 3}, "kk"),
    ],
)
def test_invalid_options_name_the_field(values: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigurationError, match=f"invalid search options: {field}"):
        parse_options(values)


@pytest.mark.parametrize(
    ("old", "field"),
    [
        ({"k": 3}, "k"),
        ({"mode": "keyword"}, "mode"),
        ({"search_type": "keyword"}, "search_type"),
        ({"bm25": False}, "bm25"),
    ],
)
def test_the_spellings_of_the_unreleased_0_1_0_are_refused(
    old: dict[str, object], field: str
) -> None:
    with pytest.raises(ConfigurationError, match=f"invalid search options: {field}"):
        parse_options(old)
    with pytest.raises(ConfigurationError, match=f"invalid search options: {field}"):
        SearchOptions(top_k=5).merged(old)


def test_rewrite_and_reranker_names_are_open() -> None:
    # Checked against the registries when used (kb.resolve), not here: a package adds names.
    options = parse_options({"query_rewrite": "my.rewrite-2", "rerank": "colbert"})
    assert (options.query_rewrite, options.rerank) == ("my.rewrite-2", "colbert")


def test_json_keeps_only_what_differs_and_round_trips() -> None:
    options = SearchOptions(top_k=4, rerank="llm")
    assert options.to_json() == '{"top_k":4,"rerank":"llm"}'
    assert options_from_json(options.to_json()) == options
    assert options_from_json(None) == SearchOptions()


@pytest.mark.parametrize(
    ("search_type", "mode"), [("hybrid", "hybrid"), ("vector", "vector"), ("full_text", "keyword")]
)
def test_search_types_map_to_rankers(search_type: str, mode: str) -> None:
    assert parse_options({"search_type": search_type}).ranker == mode


def test_filters() -> None:
    assert SearchOptions().search_filter() is None
    assert not SearchOptions().restricted and not SearchOptions(scope="all").restricted
    assert SearchOptions(scope="guide").restricted
    assert SearchOptions(scope="all").search_filter() is None
    assert SearchOptions(scope="guide", doc_ids=("a.md",), page_prefix="x/").search_filter() == (
        SearchFilter(scope="guide", page_prefix="x/", doc_ids=("a.md",))
    )


def test_needs_model() -> None:
    assert not SearchOptions(rerank="cross_encoder").needs_model
    assert not SearchOptions().needs_model
    assert SearchOptions(query_rewrite="hyde").needs_model
    assert SearchOptions(rerank="llm").needs_model
    assert SearchOptions(rerank="registered").needs_model  # given the model, if any


def test_collapse_sections_is_on_by_default_and_stored_only_when_off() -> None:
    assert SearchOptions().collapse_sections is True
    off = SearchOptions().merged({"collapse_sections": False})
    assert off.collapse_sections is False and off.to_json() == '{"collapse_sections":false}'
    assert options_from_json(off.to_json()) == off
    assert SearchOptions().merged({"collapse_sections": None}).collapse_sections is True


def test_none_is_not_given_in_a_mapping_and_in_options_alike() -> None:
    # REST bodies and OpenAI metadata arrive as SearchOptions, Python and MCP as mappings:
    # a null must mean the same in each.
    defaults = SearchOptions(scope="guide", vector_weight=0.3, top_k=4)
    for overrides in ({"scope": None, "vector_weight": None, "top_k": 6},
                      SearchOptions(scope=None, vector_weight=None, top_k=6)):  # fmt: skip
        merged = defaults.merged(overrides)
        assert (merged.scope, merged.vector_weight, merged.top_k) == ("guide", 0.3, 6)
    assert defaults.merged(SearchOptions(scope="all")).scope == "all"


def test_the_fields_given_are_remembered_through_copies() -> None:
    # SearchOptions is a plain dataclass: which fields a caller gave is kept beside them.
    asked = SearchOptions(top_k=10, scope="guide")
    assert asked.given == {"top_k", "scope"} and SearchOptions().given == frozenset()
    assert asked.given_values() == {"top_k": 10, "scope": "guide"}
    # top_k 10 is the built-in default, yet given: it overrides a knowledge base's 3.
    assert SearchOptions(top_k=3).merged(asked).top_k == 10
    assert SearchOptions(top_k=3).merged(SearchOptions(scope="x")).top_k == 3
    narrowed = asked.replaced(doc_ids=("a.md",))
    assert narrowed.given == {"top_k", "scope", "doc_ids"} and narrowed.doc_ids == ("a.md",)
    assert copy.deepcopy(asked).given == asked.given
    assert pickle.loads(pickle.dumps(asked)).given == asked.given
    assert pickle.loads(pickle.dumps(asked)) == asked


def test_values_are_checked_and_coerced_however_options_are_made() -> None:
    stored = parse_options({"top_k": "5", "doc_ids": ["a.md"], "collapse_sections": "off"})
    assert (stored.top_k, stored.doc_ids, stored.collapse_sections) == (5, ("a.md",), False)
    with pytest.raises(OptionsError, match="top_k: Input should be greater than or equal to 1"):
        SearchOptions(top_k=0)
    with pytest.raises(OptionsError, match="doc_ids"):
        SearchOptions(scope="x").replaced(doc_ids=("a", 1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        stored.top_k = 3  # type: ignore[misc]


def test_as_dict_is_every_field_and_json_types_make_lists() -> None:
    options = SearchOptions(doc_ids=("a.md",))
    assert list(options.as_dict()) == list(OPTION_NAMES)
    assert options.as_dict()["doc_ids"] == ("a.md",)
    assert options.as_dict(json_types=True)["doc_ids"] == ["a.md"]
