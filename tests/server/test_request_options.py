"""The REST API's search options: built from SearchOptions' fields, they take and refuse
exactly what ``parse_options`` does (pydantic validating them, the CLI and the client
settings not), with the same messages, and state the same bounds in the schema."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from citewise.options import OPTION_NAMES, OptionsError, SearchOptions, parse_options
from citewise.server.request_options import OPTIONS_SCHEMA_MODEL, RequestOptions

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
    st.sampled_from(["hybrid", "page", "off", "yes", "Off", " 5 ", "5.0", "1_0", "1e3", "inf",
                     "nan", "-0", "+3", "0.5", "a.b-c", "", "x" * 101]),
)  # fmt: skip
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(st.text(max_size=3), SCALARS, max_size=3),
)
OPTIONS = st.dictionaries(
    st.one_of(st.sampled_from(OPTION_NAMES), st.text(max_size=3)), VALUES, max_size=4
)


def by_pydantic(values: dict[str, Any]) -> tuple[str, Any]:
    try:
        model = OPTIONS_SCHEMA_MODEL.model_validate(values)
    except ValidationError as error:
        return "refused", [(tuple(e["loc"]), e["msg"]) for e in error.errors()]
    dumped = model.model_dump()
    if dumped["doc_ids"] is not None:
        dumped["doc_ids"] = tuple(dumped["doc_ids"])
    return "taken", dumped


def by_checks(values: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "taken", parse_options(values).as_dict()
    except OptionsError as error:
        return "refused", [(tuple(where), message) for where, message in error.problems]


@settings(max_examples=300, deadline=None, database=None)
@given(values=OPTIONS)
# Found by this test: Python strips U+001C-U+001F and reads other scripts' digits; pydantic not.
@example(values={"top_k": "0\x1f"})
@example(values={"top_k": "\x1c5"})
@example(values={"top_k": "٥"})
@example(values={"vector_weight": "0.5\x1f"})
@example(values={"vector_weight": "١"})
@example(values={"vector_weight": "0.5\u3000"})
def test_pydantic_and_the_checks_agree(values: dict[str, Any]) -> None:
    pydantic, checks = by_pydantic(values), by_checks(values)
    if pydantic[0] == checks[0] == "taken":
        assert repr(pydantic[1]) == repr(checks[1])  # NaN too, and int vs float
    else:
        assert pydantic == checks


def test_the_schema_states_each_fields_bounds() -> None:
    properties = OPTIONS_SCHEMA_MODEL.model_json_schema()["properties"]
    assert list(properties) == list(OPTION_NAMES)
    assert (properties["top_k"]["minimum"], properties["top_k"]["maximum"]) == (1, 100)
    assert properties["top_k"]["default"] == SearchOptions().top_k
    assert properties["rerank"]["pattern"] == r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
    assert properties["search_type"]["enum"] == ["hybrid", "vector", "full_text"]
    weight = properties["vector_weight"]["anyOf"][0]
    assert (weight["minimum"], weight["maximum"]) == (0, 1)


def test_a_request_body_gives_only_the_options_it_set() -> None:
    body = RequestOptions.model_validate({"top_k": 10, "scope": "guide"})
    options = body.options()
    assert options.given == {"top_k", "scope"}
    # top_k 10 is the built-in default, yet set: it overrides a knowledge base's 3.
    assert SearchOptions(top_k=3).merged(options).top_k == 10


@pytest.mark.parametrize("value", [False, 0])
def test_a_body_takes_each_value_in_its_json_type(value: Any) -> None:
    # JSON Schema: a boolean is no number and a number no boolean (``JsonTyped``).
    name = "top_k" if isinstance(value, bool) else "collapse_sections"
    with pytest.raises(ValidationError):
        RequestOptions.model_validate({name: value})
