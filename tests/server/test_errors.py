"""Error envelopes for requests FastAPI refuses before a route runs, through the openai SDK."""

from __future__ import annotations

import httpx
import openai
import pytest
from openai import OpenAI


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            b'{"model": "citewise-rag" "messages": []}',
            "Expecting ',' delimiter at line 1 column 26",
        ),
        (b'{"model": "citewise-rag",\n "messages": [}', "line 2 column 15"),
    ],
)
def test_a_malformed_json_body_is_a_400_saying_where(
    extractive: OpenAI, body: bytes, problem: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        extractive.post(
            "/chat/completions",
            cast_to=httpx.Response,
            content=body,
            options={"headers": {"Content-Type": "application/json"}},
        )
    error = refused.value.body
    assert isinstance(error, dict)
    assert error["message"].startswith("the request body is not valid JSON: ")
    assert problem in error["message"]
    assert error["param"] is None and refused.value.param is None
