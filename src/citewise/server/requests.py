"""Request bodies of the OpenAI routes, their conversations and the citewise client settings."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from citewise.config import RequestSettings
from citewise.errors import KnowledgeBaseError
from citewise.knowledge import ALL_SCOPES, KnowledgeBase
from citewise.server.errors import APIError
from citewise.server.runtime import KnowledgeBases

SETTINGS_KEY = "citewise_settings"
SETTINGS_PARAM = f"metadata.{SETTINGS_KEY}"
MAX_K = 50

Message = dict[str, str]


class ResponsesRequest(BaseModel):
    """``POST /v1/responses``: the fields citewise reads (others are accepted and ignored)."""

    model_config = ConfigDict(extra="allow")

    model: str
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    stream: bool = False
    metadata: dict[str, str] | None = None
    previous_response_id: str | None = None


class ChatRequest(BaseModel):
    """``POST /v1/chat/completions``: the fields citewise reads."""

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    metadata: dict[str, str] | None = None


class ClientSettings(BaseModel):
    """What a client may set per request, in ``metadata.citewise_settings`` (a JSON string
    of the values that differ from the defaults)."""

    model_config = ConfigDict(extra="forbid")

    scope: str = Field(
        default=ALL_SCOPES, description="`all`, or one part (nav section) of the docs"
    )
    bm25: bool = Field(
        default=True, description="also rank by BM25 keywords (false: embeddings only)"
    )
    k: int = Field(default=10, ge=1, le=MAX_K, description="sections retrieved per search query")
    kb: str | None = Field(default=None, description="the knowledge base to answer from")


def settings_schema(kbs: KnowledgeBases) -> dict[str, Any]:
    """The client settings' JSON schema (scopes and knowledge bases listed) and defaults."""
    schema = ClientSettings.model_json_schema()
    properties = schema["properties"]
    properties["scope"]["enum"] = list(kbs.scopes())
    properties["kb"] = {
        "type": "string",
        "enum": kbs.names(),
        "description": properties["kb"]["description"],
        "title": "Kb",
    }
    defaults = {**ClientSettings().model_dump(), "kb": kbs.default_name}
    return {"schema": schema, "defaults": defaults}


def parse_client_settings(metadata: dict[str, str] | None) -> ClientSettings:
    """The client settings of a request; a bad value is a 400 that names its field."""
    raw = (metadata or {}).get(SETTINGS_KEY)
    if raw is None or not raw.strip():
        return ClientSettings()
    try:
        values = json.loads(raw)
    except ValueError as error:
        raise APIError(
            400, f"{SETTINGS_PARAM} is not valid JSON: {error}", param=SETTINGS_PARAM
        ) from None
    if not isinstance(values, dict):
        raise APIError(400, f"{SETTINGS_PARAM} must be a JSON object", param=SETTINGS_PARAM)
    try:
        return ClientSettings.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        name = ".".join(str(part) for part in first["loc"])
        param = f"{SETTINGS_PARAM}.{name}"
        raise APIError(
            400, f"invalid setting {name!r}: {first['msg']}", param=param, code="invalid_value"
        ) from None


def resolve(kbs: KnowledgeBases, client: ClientSettings) -> tuple[KnowledgeBase, RequestSettings]:
    """The knowledge base and search settings a request asks for (blocking: opens the KB).

    Raises:
        APIError: 400 naming ``kb`` or ``scope`` when either is unknown.
    """
    try:
        kb = kbs.get(client.kb)
    except KnowledgeBaseError as error:
        raise APIError(
            400,
            f"invalid setting 'kb': {error}",
            param=f"{SETTINGS_PARAM}.kb",
            code="invalid_value",
        ) from None
    scopes = kb.scopes
    # An index without recorded scopes cannot tell a typo from a scope: let search decide.
    if client.scope not in scopes and len(scopes) > 1:
        raise APIError(
            400,
            f"invalid setting 'scope': unknown scope {client.scope!r} in {kb.name!r} "
            f"(use one of {', '.join(scopes)})",
            param=f"{SETTINGS_PARAM}.scope",
            code="invalid_value",
        )
    mode = "hybrid" if client.bm25 else "vector"
    return kb, RequestSettings(scope=client.scope, k=client.k, mode=mode)


def _text(content: Any, param: str) -> str:
    """The text of a message's content: a string or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for index, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind not in ("text", "input_text", "output_text"):
                raise APIError(
                    400,
                    f"unsupported content part {kind!r}: citewise reads text only",
                    param=f"{param}[{index}].type",
                )
            texts.append(str(part.get("text", "")))
        return "".join(texts)
    raise APIError(400, "content must be a string or a list of text parts", param=param)


_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def _message(item: dict[str, Any], param: str) -> Message:
    role = _ROLES.get(str(item.get("role")))
    if role is None:
        raise APIError(
            400,
            f"unsupported role {item.get('role')!r} (use user, assistant, system or developer)",
            param=f"{param}.role",
        )
    return {"role": role, "content": _text(item.get("content"), f"{param}.content")}


def _ends_with_user(messages: list[Message], param: str) -> list[Message]:
    if not messages or messages[-1]["role"] != "user" or not messages[-1]["content"].strip():
        raise APIError(400, "the conversation must end with a user message", param=param)
    return messages


def chat_messages(request: ChatRequest) -> list[Message]:
    """The conversation of a Chat Completions request."""
    messages = [_message(item, f"messages[{i}]") for i, item in enumerate(request.messages)]
    return _ends_with_user(messages, "messages")


def responses_messages(request: ResponsesRequest) -> list[Message]:
    """The conversation of a Responses request: ``instructions`` then the ``input`` items.

    Earlier commentary (status updates) a client sends back is dropped: it was never part
    of an answer.
    """
    if request.previous_response_id is not None:
        raise APIError(
            400,
            "citewise keeps no conversation state: send the earlier turns in 'input'",
            param="previous_response_id",
        )
    messages: list[Message] = []
    if request.instructions:
        messages.append({"role": "system", "content": request.instructions})
    if isinstance(request.input, str):
        messages.append({"role": "user", "content": request.input})
        return _ends_with_user(messages, "input")
    for index, item in enumerate(request.input):
        param = f"input[{index}]"
        if item.get("type", "message") != "message":
            raise APIError(
                400, f"unsupported input item {item.get('type')!r}", param=f"{param}.type"
            )
        if item.get("phase") == "commentary":
            continue
        messages.append(_message(item, param))
    return _ends_with_user(messages, "input")


def check_model(model: str, models: tuple[str, ...]) -> None:
    if model not in models:
        raise APIError(
            404,
            f"the model {model!r} does not exist (use one of {', '.join(models)})",
            param="model",
            code="model_not_found",
        )
