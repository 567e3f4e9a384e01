"""OpenAI request parameters citewise does not implement: refused with a 400 naming the
parameter, as OpenAI-compatible servers do, instead of silently ignored (a client asking
for two choices or its own tools would otherwise get something else). JSON output formats
are read by :mod:`citewise.server.formats`."""

from __future__ import annotations

from typing import Any

from citewise.server.errors import APIError

__all__ = ["check_chat_parameters", "check_responses_parameters"]

_NO_TOOLS = "citewise answers from its documentation and calls no client tools"


def _refuse(param: str, message: str) -> APIError:
    return APIError(400, f"unsupported parameter {param!r}: {message}", param=param,
                    code="unsupported_parameter")  # fmt: skip


def check_chat_parameters(extra: dict[str, Any]) -> None:
    """Refuse what a Chat Completions request asks for that citewise cannot give.

    Raises:
        APIError: 400 naming the parameter.
    """
    n = extra.get("n")
    if n is not None and n != 1:
        raise _refuse("n", "citewise writes one answer per request (n must be 1)")
    for name in ("tools", "functions"):
        if extra.get(name):
            raise _refuse(name, _NO_TOOLS)


def check_responses_parameters(extra: dict[str, Any]) -> None:
    """Refuse what a Responses request asks for that citewise cannot give.

    Raises:
        APIError: 400 naming the parameter.
    """
    if extra.get("store") is True:
        raise _refuse(
            "store", "citewise keeps no responses (there is no GET /v1/responses/{id}); "
            "send store: false or leave it out",
        )  # fmt: skip
    if extra.get("tools"):
        raise _refuse("tools", _NO_TOOLS)
    if extra.get("background") is True:
        raise _refuse("background", "answers are made while the request waits or streams")
