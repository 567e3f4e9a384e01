"""A search option's value checks without pydantic: the values it takes ("5" is 5, a list is a
tuple) and pydantic's words for the ones it refuses, each bound of each option named."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import pytest

from citewise.option_checks import Invalid, check_value
from citewise.options import OptionsError, SearchOptions, parse_options


@pytest.mark.parametrize(
    ("annotation", "value", "bounds", "taken"),
    [
        (int, "5", {}, 5),
        (int, " 1_0 ", {}, 10),
        (int, "+5", {}, 5),
        (int, "5.00", {}, 5),
        (int, 5.0, {}, 5),
        (int, True, {}, 1),
        (int, b"7", {}, 7),
        (float, 1, {}, 1.0),
        (float, " 0.5 ", {}, 0.5),
        (float | None, None, {}, None),
        (bool, "Off", {}, False),
        (bool, "yes", {}, True),
        (bool, 0.0, {}, False),
        (bool, 1, {}, True),
        (str, b"x", {}, "x"),
        (tuple[str, ...], ["a", "b"], {}, ("a", "b")),
        (tuple[str, ...], {"a"}, {}, ("a",)),
        (dict[str, str], {"author": "Ada"}, {}, {"author": "Ada"}),
        (Literal["section", "page"], "page", {}, "page"),
        (
            str,
            "my.rewrite-2",
            {"max_length": 100, "pattern": r"^[a-z][a-z.\-0-9]*$"},
            "my.rewrite-2",
        ),
    ],
)
def test_values_taken(annotation: Any, value: Any, bounds: Mapping[str, Any], taken: Any) -> None:
    got = check_value(annotation, value, bounds)
    assert got == taken and type(got) is type(taken)


@pytest.mark.parametrize(
    ("annotation", "value", "bounds", "message"),
    [
        (int, 5.5, {}, "Input should be a valid integer, got a number with a fractional part"),
        (int, "x", {}, "Input should be a valid integer, unable to parse string as an integer"),
        (int, "5.", {}, "Input should be a valid integer, unable to parse string as an integer"),
        (int, None, {}, "Input should be a valid integer"),
        (int, [1], {}, "Input should be a valid integer"),
        (int, float("nan"), {}, "Input should be a finite number"),
        (int, 1e20, {}, "Unable to parse input string as an integer, exceeded maximum size"),
        (float, "x", {}, "Input should be a valid number, unable to parse string as a number"),
        (float, [], {}, "Input should be a valid number"),
        (bool, "sometimes", {}, "Input should be a valid boolean, unable to interpret input"),
        (bool, " yes ", {}, "Input should be a valid boolean, unable to interpret input"),
        (bool, 2, {}, "Input should be a valid boolean, unable to interpret input"),
        (bool, 15.0, {}, "Input should be a valid boolean, unable to interpret input"),
        (bool, 1.5, {}, "Input should be a valid boolean"),
        (bool, 2**63, {}, "Input should be a valid boolean"),
        (bool, None, {}, "Input should be a valid boolean"),
        (str, 3, {}, "Input should be a valid string"),
        (tuple[str, ...], "abc", {}, "Input should be a valid tuple"),
        (tuple[str, ...], {"a": "b"}, {}, "Input should be a valid tuple"),
        (dict[str, str], ["a"], {}, "Input should be a valid dictionary"),
        (Literal["section", "page"], "site", {}, "Input should be 'section' or 'page'"),
        (Literal["a", "b", "c"], 1, {}, "Input should be 'a', 'b' or 'c'"),
        # Bounds: numbers ``le`` first (NaN fails it), a float bound written as pydantic does.
        (int, 0, {"ge": 1, "le": 100}, "Input should be greater than or equal to 1"),
        (int, 101, {"ge": 1, "le": 100}, "Input should be less than or equal to 100"),
        (float, -0.1, {"ge": 0.0, "le": 1.0}, "Input should be greater than or equal to 0"),
        (float, float("nan"), {"ge": 0.0, "le": 1.0}, "Input should be less than or equal to 1"),
        (str, "", {"min_length": 1}, "String should have at least 1 character"),
        (str, "ab", {"min_length": 3}, "String should have at least 3 characters"),
        (str, "x" * 201, {"max_length": 200}, "String should have at most 200 characters"),
        (str, "a b", {"pattern": "^[a-z]*$"}, "String should match pattern '^[a-z]*$'"),
    ],
)
def test_values_refused_in_pydantics_words(
    annotation: Any, value: Any, bounds: Mapping[str, Any], message: str
) -> None:
    with pytest.raises(Invalid) as caught:
        check_value(annotation, value, bounds)
    assert caught.value.problems == [((), message)]


def test_every_bad_item_is_located() -> None:
    with pytest.raises(Invalid) as caught:
        check_value(tuple[str, ...] | None, ["a", 1, 2], {})
    assert caught.value.problems == [
        ((1,), "Input should be a valid string"),
        ((2,), "Input should be a valid string"),
    ]
    with pytest.raises(Invalid) as caught:
        check_value(dict[str, str], {"a": None, 1: "x"}, {})
    assert caught.value.problems == [
        (("a",), "Input should be a valid string"),
        ((1, "[key]"), "Input should be a valid string"),
    ]


# Each bounded option, at each bound: the value past it and what a user reads.
BOUNDS = [
    ("top_k", 0, "greater than or equal to 1"),
    ("top_k", 101, "less than or equal to 100"),
    ("rerank_candidates", 0, "greater than or equal to 1"),
    ("rerank_candidates", 101, "less than or equal to 100"),
    ("candidates_per_ranker", 0, "greater than or equal to 1"),
    ("candidates_per_ranker", 201, "less than or equal to 200"),
    ("vector_weight", -0.5, "greater than or equal to 0"),
    ("vector_weight", 1.5, "less than or equal to 1"),
    ("context_window", -1, "greater than or equal to 0"),
    ("context_window", 6, "less than or equal to 5"),
    ("agent_rewrites", -1, "greater than or equal to 0"),
    ("agent_rewrites", 4, "less than or equal to 3"),
]


@pytest.mark.parametrize(("name", "value", "bound"), BOUNDS)
def test_each_bound_of_each_option(name: str, value: float, bound: str) -> None:
    expected = f"invalid search options: {name}: Input should be {bound}"
    for make in (lambda: parse_options({name: value}), lambda: SearchOptions(**{name: value})):
        with pytest.raises(OptionsError) as caught:
            make()
        assert str(caught.value) == expected and caught.value.field == name


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("query_rewrite", "x" * 101, "String should have at most 100 characters"),
        ("rerank", "two words", r"String should match pattern '^[A-Za-z0-9][A-Za-z0-9_.\-]*$'"),
        ("chat_model", "", "String should have at least 1 character"),
        ("chat_model", "m" * 201, "String should have at most 200 characters"),
        ("reranker_dir", "", "String should have at least 1 character"),
        ("search_type", "keyword", "Input should be 'hybrid', 'vector' or 'full_text'"),
        ("verify", "maybe", "Input should be 'off', 'report', 'warn' or 'regenerate'"),
        ("kk", 3, "Extra inputs are not permitted"),
    ],
)
def test_each_text_option_and_unknown_names(name: str, value: Any, message: str) -> None:
    with pytest.raises(OptionsError) as caught:
        parse_options({name: value})
    assert str(caught.value) == f"invalid search options: {name}: {message}"


def test_every_problem_is_reported_in_the_fields_order() -> None:
    with pytest.raises(OptionsError) as caught:
        parse_options({"kk": 1, "search_type": "x", "top_k": 0})
    assert str(caught.value) == (
        "invalid search options: top_k: Input should be greater than or equal to 1; "
        "search_type: Input should be 'hybrid', 'vector' or 'full_text'; "
        "kk: Extra inputs are not permitted"
    )
    assert caught.value.field == "top_k"
