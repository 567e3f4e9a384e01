"""The checks of one search option's value, without pydantic: the values it took and the
messages it gave (``"5"`` is 5, a list is a tuple, ``Input should be greater than or equal
to 1``), so a cold ``citewise search`` never imports it (benchmarks/cold-cli.md).

A field is described by its type (``int``, ``float``, ``bool``, ``str``, a ``Literal``,
``tuple[str, ...]``, ``dict[str, str]``, each maybe ``| None``) and its bounds (``ge``,
``le``, ``min_length``, ``max_length``, ``pattern``: the keywords of ``pydantic.Field``, so
the server's request models state the same ones).
"""

from __future__ import annotations

import math
import re
import types
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin

__all__ = ["Invalid", "Problem", "check_value"]

Location = tuple[str | int, ...]
Problem = tuple[Location, str]
"""Where in the value (``()``: the value itself) and what is wrong, as pydantic says it."""

# pydantic's words for a boolean in a string (compared lowercased, not stripped).
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
# An integer in a string: a sign, digits with single underscores between, ``.0`` allowed.
_INT_TEXT = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*(?:\.0+)?")
# What pydantic strips around a number: Unicode's White_Space, as Rust's ``char::is_whitespace``.
# Python's str.strip() also strips U+001C-U+001F, and float() also takes digits of other
# scripts (``١``): pydantic refuses both.
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)
# Beyond this a float is refused as an integer (pydantic's 64-bit limit).
_INT_FLOAT_LIMIT = 2.0**63
_BAD_INT = "Input should be a valid integer"
_BAD_FLOAT = "Input should be a valid number"
_BAD_BOOL = "Input should be a valid boolean"
_BAD_STR = "Input should be a valid string"


class Invalid(ValueError):
    """A value was refused: every problem found in it."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(message for _, message in problems))
        self.problems = problems


def _fail(message: str) -> Invalid:
    return Invalid([((), message)])


def _number(bound: float) -> str:
    """A bound as pydantic writes it (``0`` for ``0.0``)."""
    return str(int(bound)) if float(bound).is_integer() else repr(bound)


def _text(value: Any) -> str | None:
    """``value`` when it is text (bytes are decoded, as pydantic's lax mode does)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode()
        except UnicodeDecodeError:
            return None
    return None


def _int(value: Any) -> int:
    if isinstance(value, int):  # bool too: True is 1
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _fail("Input should be a finite number")
        if abs(value) >= _INT_FLOAT_LIMIT:
            raise _fail("Unable to parse input string as an integer, exceeded maximum size")
        if not value.is_integer():
            raise _fail(f"{_BAD_INT}, got a number with a fractional part")
        return int(value)
    text = _text(value)
    if text is None:
        raise _fail(_BAD_INT)
    text = text.strip(_WHITE_SPACE)
    if not _INT_TEXT.fullmatch(text):
        raise _fail(f"{_BAD_INT}, unable to parse string as an integer")
    return int(text.partition(".")[0])


def _float(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    text = _text(value)
    if text is None:
        raise _fail(_BAD_FLOAT)
    text = text.strip(_WHITE_SPACE)
    try:
        if not text.isascii() or text != text.strip():
            raise ValueError(text)
        return float(text)
    except ValueError:
        raise _fail(f"{_BAD_FLOAT}, unable to parse string as a number") from None


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if value in (0, 1):
            return bool(value)
        # A whole number that fits 64 bits is "uninterpretable"; any other is no boolean.
        whole = isinstance(value, int) or (math.isfinite(value) and value.is_integer())
        if whole and -_INT_FLOAT_LIMIT <= value < _INT_FLOAT_LIMIT:
            raise _fail(f"{_BAD_BOOL}, unable to interpret input")
        raise _fail(_BAD_BOOL)
    text = _text(value)
    if text is None:
        raise _fail(_BAD_BOOL)
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise _fail(f"{_BAD_BOOL}, unable to interpret input")


def _str(value: Any) -> str:
    text = _text(value)
    if text is None:
        raise _fail(_BAD_STR)
    return text


def _bounded(value: Any, bounds: Mapping[str, Any]) -> Any:
    """``value`` within ``bounds`` (numbers: ``le`` first, so NaN fails it as pydantic's)."""
    if isinstance(value, str):
        least, most = bounds.get("min_length"), bounds.get("max_length")
        if least is not None and len(value) < least:
            unit = "character" if least == 1 else "characters"
            raise _fail(f"String should have at least {least} {unit}")
        if most is not None and len(value) > most:
            unit = "character" if most == 1 else "characters"
            raise _fail(f"String should have at most {most} {unit}")
        pattern = bounds.get("pattern")
        if pattern is not None and not _compiled(pattern).search(value):
            raise _fail(f"String should match pattern '{pattern}'")
        return value
    most, least = bounds.get("le"), bounds.get("ge")
    if most is not None and not value <= most:
        raise _fail(f"Input should be less than or equal to {_number(most)}")
    if least is not None and not value >= least:
        raise _fail(f"Input should be greater than or equal to {_number(least)}")
    return value


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _literal(choices: tuple[Any, ...]) -> Callable[[Any], Any]:
    quoted = [repr(choice) for choice in choices]
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"

    def check(value: Any) -> Any:
        if isinstance(value, str) and value in choices:
            return value
        raise _fail(f"Input should be {listed}")

    return check


def _tuple_of_str(value: Any) -> tuple[str, ...]:
    if isinstance(value, str | bytes | bytearray | Mapping) or not hasattr(value, "__iter__"):
        raise _fail("Input should be a valid tuple")
    items: list[str | None] = []
    problems: list[Problem] = []
    for index, item in enumerate(value):
        text = _text(item)
        if text is None:
            problems.append(((index,), _BAD_STR))
        items.append(text)
    if problems:
        raise Invalid(problems)
    return tuple(item for item in items if item is not None)


def _dict_of_str(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise _fail("Input should be a valid dictionary")
    result: dict[str, str] = {}
    problems: list[Problem] = []
    for key, item in value.items():
        name, text = _text(key), _text(item)
        if name is None:
            problems.append(((key, "[key]"), _BAD_STR))
        if text is None:
            problems.append(((key,), _BAD_STR))
        if name is not None and text is not None:
            result[name] = text
    if problems:
        raise Invalid(problems)
    return result


_SCALARS: dict[Any, Callable[[Any], Any]] = {int: _int, float: _float, bool: _bool, str: _str}


def check_value(annotation: Any, value: Any, bounds: Mapping[str, Any]) -> Any:
    """``value`` as a field of type ``annotation`` within ``bounds`` takes it.

    Raises:
        Invalid: what is wrong with it (located inside it, for a tuple's or a dict's items).
    """
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):  # ``X | None``: None, or an X
        if value is None:
            return None
        (inner,) = [arg for arg in get_args(annotation) if arg is not type(None)]
        return check_value(inner, value, bounds)
    if origin is Literal:
        return _literal(get_args(annotation))(value)
    if origin is tuple:
        return _tuple_of_str(value)
    if origin is dict:
        return _dict_of_str(value)
    return _bounded(_SCALARS[annotation](value), bounds)
