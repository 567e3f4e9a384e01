"""Fuzzed search options and client settings: a valid value or an error naming the field."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from citewise.errors import ConfigurationError
from citewise.options import OPTION_NAMES, SearchOptions, parse_options
from citewise.server.errors import APIError
from citewise.server.requests import SETTINGS_PARAM, parse_client_settings

FUZZ = settings(max_examples=200, deadline=1000, database=None)
KEYS = st.sampled_from(
    [*OPTION_NAMES, "k", "mode", "bm25", "kb", "show_status", "", "x", "__class__"]
)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30),
    st.sampled_from(["hybrid", "vector", "full_text", "keyword", "llm", "off", "all", "../x"]),
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner),
    max_leaves=8,
)
OPTIONS = st.dictionaries(st.one_of(KEYS, st.text(max_size=10)), VALUES, max_size=6)


@FUZZ
@given(values=OPTIONS)
def test_parse_options_returns_options_or_a_configuration_error(values: dict[str, Any]) -> None:
    try:
        options = parse_options(values)
    except ConfigurationError as error:
        assert str(error).startswith("invalid search options: ")
        return
    assert isinstance(options, SearchOptions)
    assert options.top_k >= 1


@FUZZ
@given(values=OPTIONS)
def test_client_settings_are_parsed_or_refused_with_a_400_naming_the_field(
    values: dict[str, Any],
) -> None:
    try:
        raw = json.dumps(values)
    except (TypeError, ValueError):  # NaN and friends are allowed by json.dumps; keys are str
        return
    try:
        parsed = parse_client_settings({"citewise_settings": raw})
    except APIError as error:
        assert error.status == 400 and error.type == "invalid_request_error"
        assert error.param is not None and error.param.startswith(SETTINGS_PARAM)
        return
    assert parsed.kb is None or isinstance(parsed.kb, str)


@FUZZ
@given(raw=st.text(max_size=200))
def test_any_settings_string_is_parsed_or_refused_with_a_400(raw: str) -> None:
    try:
        parse_client_settings({"citewise_settings": raw})
    except APIError as error:
        assert error.status == 400 and error.param is not None
