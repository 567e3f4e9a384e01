"""A cited answer reshaped into the JSON a client's ``response_format`` asks for.

The answer is written as usual (searched, cited, checked); one more model call then turns its
Markdown into the client's JSON schema (or any JSON object). Its sources stay citations: one
``url_citation`` per cited section, over the place the JSON gives the section's URL, else
over the whole JSON. The grounding check's report is the Markdown answer's, the text every
value of the JSON comes from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from citewise.errors import ModelError
from citewise.llm import ajson_reply, at_temperature_zero
from citewise.models import Answer, Citation

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["FORMAT_TAG", "reshape"]

FORMAT_TAG = "citewise:format"
"""The tag of the model call that reshapes an answer (telemetry's ``purpose``)."""

_SYSTEM = (
    "You turn an answer about a documentation set into the JSON a program asked for. Use only "
    "what the answer says: keep its facts, names and commands as it writes them, add nothing "
    "it does not say, and put a source's URL wherever the schema has a place for sources. "
    "Leave out the Markdown (link syntax, emphasis) unless a value is meant to hold Markdown."
)


async def reshape(
    model: BaseChatModel, answer: Answer, response_format: Mapping[str, Any], question: str
) -> Answer:
    """``answer`` with its text replaced by the JSON ``response_format`` asks for.

    Raises:
        ModelError: the model gave no JSON object, or one the schema does not allow.
    """
    from langchain_core.messages import HumanMessage, SystemMessage

    sources = "\n".join(f"- {c.title}: {c.url}" for c in _distinct(answer.citations))
    prompt = [
        SystemMessage(_SYSTEM),
        HumanMessage(
            f"Question:\n{question}\n\nAnswer (Markdown):\n{answer.text}\n\n"
            f"Sources:\n{sources or '(none)'}"
        ),
    ]
    value = await ajson_reply(
        at_temperature_zero(model), prompt, response_format, tags=(FORMAT_TAG,)
    )
    spec = response_format.get("json_schema")
    if isinstance(spec, Mapping) and isinstance(spec.get("schema"), Mapping):
        value = fit(value, spec["schema"], strict=bool(spec.get("strict")), where="$")
    text = json.dumps(value, ensure_ascii=False)
    return replace(answer, text=text, citations=_citations(text, answer.citations))


def fit(value: Any, schema: Mapping[str, Any], *, strict: bool, where: str) -> Any:
    """``value`` as the schema allows it: an object without the properties it does not
    declare (when it allows no others, or ``strict``), every required property present.

    Raises:
        ModelError: a required property is missing, or the value is not the object asked for.
    """
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [fit(v, schema["items"], strict=strict, where=f"{where}[]") for v in value]
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return value
    if not isinstance(value, dict):
        raise ModelError(f"the chat model's JSON reply at {where} is not an object")
    missing = [name for name in schema.get("required", ()) if name not in value]
    if missing:
        raise ModelError(f"the chat model's JSON reply at {where} lacks {', '.join(missing)}")
    closed = strict or schema.get("additionalProperties") is False
    fitted = {}
    for name, item in value.items():
        declared = properties.get(name)
        if declared is None:
            if not closed:
                fitted[name] = item
            continue
        fitted[name] = (
            fit(item, declared, strict=strict, where=f"{where}.{name}")
            if isinstance(declared, Mapping)
            else item
        )
    return fitted


def _distinct(citations: Sequence[Citation]) -> list[Citation]:
    return list({c.url: c for c in reversed(citations)}.values())[::-1]


def _citations(text: str, cited: Sequence[Citation]) -> tuple[Citation, ...]:
    """One citation per cited section: over its URL in the JSON, else over all of it."""
    found = []
    for citation in _distinct(cited):
        written = json.dumps(citation.url, ensure_ascii=False)[1:-1]
        at = text.find(written)
        start, end = (at, at + len(written)) if at >= 0 else (0, len(text))
        found.append(replace(citation, start_index=start, end_index=end, attributed=False))
    return tuple(found)
