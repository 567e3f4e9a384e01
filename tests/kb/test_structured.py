"""An answer's JSON fitted to the client's schema: no field it does not declare, none missing."""

from __future__ import annotations

import pytest

from citewise.errors import ModelError
from citewise.kb.structured import fit

SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "steps": {"type": "array", "items": {"type": "object",
                  "properties": {"text": {"type": "string"}}, "required": ["text"],
                  "additionalProperties": False}},
    },
    "required": ["answer"],
}  # fmt: skip


def test_a_closed_schema_gets_only_its_fields() -> None:
    value = {"answer": "a", "note": "x", "steps": [{"text": "one", "why": "?"}]}

    fitted = fit(value, SCHEMA, strict=True, where="$")

    assert fitted == {"answer": "a", "steps": [{"text": "one"}]}
    # Without strict, the top level allows other fields; the items still do not.
    assert fit(value, SCHEMA, strict=False, where="$") == {
        "answer": "a", "note": "x", "steps": [{"text": "one"}]
    }  # fmt: skip


def test_a_missing_required_field_is_a_model_error_naming_it() -> None:
    with pytest.raises(ModelError, match=r"\$\.steps\[\] lacks text"):
        fit({"answer": "a", "steps": [{}]}, SCHEMA, strict=True, where="$")
    with pytest.raises(ModelError, match="not an object"):
        fit(["a"], SCHEMA, strict=True, where="$")
