"""The output format a client asks for: Chat Completions' ``response_format`` and Responses'
``text.format``, checked and given in the Chat Completions shape the chat model's endpoint
takes (``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`` or
``{"type": "json_object"}``); None for plain text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from citewise.server.errors import APIError

__all__ = ["OutputFormat", "chat_format", "responses_format"]

_SCHEMA_FIELDS = ("name", "schema", "strict", "description")


@dataclass(frozen=True)
class OutputFormat:
    """A JSON format to reshape the answer into, and the parameter that asked for it."""

    response_format: dict[str, Any]
    param: str

    def without_model(self) -> APIError:
        """The 400 for a server with no chat model: nothing can write the JSON."""
        kind = self.response_format["type"]
        return APIError(
            400, f"unsupported parameter {self.param!r}: {kind!r} needs a chat model, and this "
            "server answers extractively (no CITEWISE_LLM_MODEL)", param=self.param,
            code="unsupported_parameter",
        )  # fmt: skip


def _invalid(param: str, message: str) -> APIError:
    return APIError(400, f"invalid {param!r}: {message}", param=param, code="invalid_value")


def _refused(param: str, kind: object) -> APIError:
    return APIError(400, f"unsupported parameter {param!r}: {kind!r} (citewise writes text, "
                    "json_object or json_schema)", param=param,
                    code="unsupported_parameter")  # fmt: skip


def _schema(param: str, spec: object) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise _invalid(param, "give the schema as an object with a name and a schema")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise _invalid(f"{param}.name", "a json_schema format needs a name")
    if "schema" in spec and not isinstance(spec["schema"], dict):
        raise _invalid(f"{param}.schema", "the schema must be a JSON object")
    return {k: spec[k] for k in _SCHEMA_FIELDS if spec.get(k) is not None}


def chat_format(extra: dict[str, Any]) -> OutputFormat | None:
    """A Chat Completions request's ``response_format`` (None: text).

    Raises:
        APIError: 400 naming the parameter, for a format citewise does not write or a
            malformed one.
    """
    value = extra.get("response_format")
    if value is None:
        return None
    return _format("response_format", value, lambda v: v.get("json_schema"), ".json_schema")


def responses_format(extra: dict[str, Any]) -> OutputFormat | None:
    """A Responses request's ``text.format`` (None: text), in the Chat Completions shape.

    Raises:
        APIError: 400 naming the parameter, as :func:`chat_format`.
    """
    text = extra.get("text")
    value = text.get("format") if isinstance(text, dict) else None
    if value is None:
        return None
    return _format("text.format", value, lambda v: v, "")


def _format(
    param: str, value: Any, schema_of: Callable[[dict[str, Any]], Any], schema_path: str
) -> OutputFormat | None:
    """The format ``value`` at ``param`` asks for: its JSON schema found by ``schema_of``
    (nested in Chat Completions, beside the type in Responses) at ``param + schema_path``."""
    if not isinstance(value, dict):
        raise _invalid(param, 'give an object such as {"type": "json_object"}')
    kind = value.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return OutputFormat({"type": "json_object"}, param)
    if kind == "json_schema":
        spec = _schema(param + schema_path, schema_of(value))
        return OutputFormat({"type": "json_schema", "json_schema": spec}, param)
    raise _refused(param, kind)
