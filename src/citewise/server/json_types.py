"""Request models take each value in the JSON type their schema states: pydantic's lax mode
would take ``0`` for ``false`` and ``false`` for ``0``, which a JSON Schema forbids, while
strict mode would refuse ``2.0`` for an integer, which a JSON Schema allows."""

from __future__ import annotations

import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, model_validator
from pydantic_core import PydanticCustomError

__all__ = ["JsonTyped"]


def _scalars(annotation: Any) -> set[type]:
    """The scalar types (bool, int, float) ``annotation`` admits, through unions."""
    if annotation in (bool, int, float):
        return {annotation}
    if get_origin(annotation) in (Union, types.UnionType):
        return set().union(*(_scalars(arg) for arg in get_args(annotation)))
    return set()


class JsonTyped(BaseModel):
    """A base for request models: a boolean field takes only ``true``/``false``, a number
    field never takes them (every other rule stays pydantic's)."""

    @model_validator(mode="before")
    @classmethod
    def _json_types(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        for name, value in data.items():
            field = cls.model_fields.get(name) if isinstance(name, str) else None
            if field is None or value is None:
                continue
            kinds = _scalars(field.annotation)
            if kinds == {bool} and not isinstance(value, bool):
                raise PydanticCustomError("bool_type", f"{name}: Input should be true or false")
            if bool not in kinds and kinds & {int, float} and isinstance(value, bool):
                raise PydanticCustomError("int_type", f"{name}: Input should be a number")
        return data
