"""Request bodies of the OpenAI routes, their conversations and the citewise client settings
(``metadata.citewise_settings``: the search options of ``citewise.options`` plus ``kb``;
``metadata.lgos_settings``, the seed's name for it, is read the same way)."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from pydantic import ConfigDict, Field

from citewise.errors import ConfigurationError, KnowledgeBaseError
from citewise.kb import (
    ALL_SCOPE,
    CHAT_MODELS,
    OPTION_NAMES,
    QUERY_REWRITES,
    RERANKERS,
    KBConfig,
    KnowledgeBase,
    OptionsError,
    Resolved,
    SearchOptions,
    parse_options,
)
from citewise.server.errors import APIError
from citewise.server.json_types import JsonTyped
from citewise.server.limits import check_json_text, check_json_value
from citewise.server.request_options import OPTIONS_SCHEMA_MODEL
from citewise.server.runtime import Runtime

log = logging.getLogger(__name__)

SETTINGS_KEY = "citewise_settings"
SETTINGS_PARAM = f"metadata.{SETTINGS_KEY}"
# The key clients of the seed (the LGOS docs assistant) send the same settings under.
SEED_SETTINGS_KEY = "lgos_settings"

Message = dict[str, str]


class ResponsesRequest(JsonTyped):
    """``POST /v1/responses``: the fields citewise reads (others are accepted and ignored)."""

    model_config = ConfigDict(extra="allow")

    model: str
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    stream: bool = False
    metadata: dict[str, str] | None = None
    previous_response_id: str | None = None
    # "file_search_call.results": add the searches and the sections found to the output.
    include: list[str] | None = None


class ChatRequest(JsonTyped):
    """``POST /v1/chat/completions``: the fields citewise reads."""

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    # ``{"include_usage": true}``: a last chunk with the token usage (no choices).
    stream_options: dict[str, Any] | None = None
    metadata: dict[str, str] | None = None

    @property
    def include_usage(self) -> bool:
        return bool((self.stream_options or {}).get("include_usage"))


KB_SETTING = "kb"
# A server path: set per knowledge base by whoever runs the server, never by a client.
SERVER_ONLY = ("reranker_dir",)
# Chat Completions only: stream the workflow's statuses as ``reasoning_content`` deltas.
STATUS_SETTING = "show_status"

# For the model cards: what each field means to a client (a field's own description wins).
_DESCRIPTIONS = {
    "top_k": "sections retrieved per search query",
    "search_type": "hybrid (embeddings + BM25 keywords, fused), vector or full_text (BM25)",
    "query_rewrite": "also search rephrasings written by the chat model (off: the question only)",
    "rerank": "reorder the candidates: cross_encoder (local model), llm, or off",
    "rerank_candidates": "how many fused candidates the reranker sees",
    "candidates_per_ranker": "how many candidates each ranker (embeddings, BM25) brings to "
    "the fusion (default 20, chosen by measurement)",
    "vector_weight": "hybrid: the embeddings' share of the fusion, 0-1 (BM25 has the rest); "
    "default equal shares",
    "context_window": "neighbouring chunks added to each hit",
    "context_scope": "where the context window's chunks come from: section (the hit's own) "
    "or page (adjacent sections of the page too)",
    "collapse_sections": "each section once, at its best chunk (false: every matching chunk)",
    "scope": "`all`, or one part (nav section) of the docs",
    "doc_ids": "only these documents",
    "page_prefix": "only pages whose path starts with this",
    "doc_metadata": "only documents whose metadata has these values, e.g. "
    '{"author": "Ada"} (author, subject, description, created, modified)',
    "verify": "the answer's grounding check: off, report (in the response), warn (also a "
    "visible warning in the answer) or regenerate (write it again once, naming what the "
    "documentation does not hold)",
    "agent_rewrites": "citewise-agentic: how many times a search graded irrelevant may be "
    "rewritten (at most 3)",
    "agent_grading": "citewise-agentic: grade the sections found (false: answer from them)",
    "chat_model": "the chat model for query rewrites and rerank=llm: the server's or the "
    "knowledge base's (default: the knowledge base's)",
    KB_SETTING: "the knowledge base to answer from: a name, a list of names, or all (each "
    "question routed to the libraries it is about)",
    STATUS_SETTING: "Chat Completions: stream what citewise does (planning, searching) as "
    "reasoning_content deltas before the answer",
}


@dataclass(frozen=True)
class ClientSettings:
    """What a client set in ``metadata.citewise_settings`` (a JSON string of the values
    that differ from the defaults): the knowledge base, and search options over its
    defaults (only the fields the client set count as set)."""

    kb: str | tuple[str, ...] | None = None  # several: they answer as one
    options: SearchOptions = field(default_factory=SearchOptions)
    show_status: bool = False


def _invalid(name: str, message: str, key: str = SETTINGS_KEY) -> APIError:
    return APIError(
        400,
        f"invalid setting {name!r}: {message}",
        param=f"metadata.{key}.{name}",
        code="invalid_value",
    )


def settings_schema(runtime: Runtime) -> dict[str, Any]:
    """The client settings' JSON schema and defaults: the search options, with the default
    knowledge base's own defaults, its scopes and the knowledge bases listed. Blocking."""
    defaults = runtime.defaults()
    values: dict[str, Any] = defaults.as_dict(json_types=True)
    # No scope and ``all`` both search everything; the selector lists ``all``.
    values["scope"] = defaults.scope or ALL_SCOPE
    values[KB_SETTING] = runtime.default_name
    values[STATUS_SETTING] = False
    schema = OPTIONS_SCHEMA_MODEL.model_json_schema()
    properties: dict[str, Any] = schema["properties"]
    for name in SERVER_ONLY:
        del properties[name], values[name]
    properties["scope"] = {"title": "Scope", "type": "string", "enum": list(runtime.scopes())}
    # Open names: the ones registered now (built-ins and installed packages').
    properties["query_rewrite"]["enum"] = list(QUERY_REWRITES)
    properties["rerank"]["enum"] = list(RERANKERS)
    names = runtime.names()
    properties[KB_SETTING] = {"title": "Kb", "type": "string",
                              "enum": [*names, "all"] if len(names) > 1 else names}  # fmt: skip
    properties[STATUS_SETTING] = {"title": "Show Status", "type": "boolean"}
    for name, prop in properties.items():
        prop.setdefault("description", _DESCRIPTIONS.get(name, ""))
        prop["default"] = values[name]
    return {"schema": schema, "defaults": values}


def chat_metadata(request: ChatRequest) -> dict[str, str] | None:
    """A Chat Completions request's metadata, with a top-level ``citewise_settings`` (an
    object or its JSON text) read as ``metadata.citewise_settings``: what a client that
    forwards no ``metadata`` can send (an Open WebUI *Custom Parameter*). Both is a 400."""
    extra = (request.model_extra or {}).get(SETTINGS_KEY)
    if extra is None:
        return request.metadata
    if request.metadata and SETTINGS_KEY in request.metadata:
        raise APIError(
            400, f"send the settings once: {SETTINGS_KEY} or {SETTINGS_PARAM}, not both",
            param=SETTINGS_KEY,
        )  # fmt: skip
    if isinstance(extra, dict):
        extra = json.dumps(extra)
    if not isinstance(extra, str):
        raise APIError(400, f"{SETTINGS_KEY} must be a JSON object", param=SETTINGS_KEY)
    return {**(request.metadata or {}), SETTINGS_KEY: extra}


def parse_client_settings(metadata: dict[str, str] | None) -> ClientSettings:
    """The client settings of a request; a bad value is a 400 that names its field.

    ``metadata.lgos_settings`` is read when ``citewise_settings`` is absent (sending both is
    a 400).
    """
    metadata = metadata or {}
    key = SETTINGS_KEY if SETTINGS_KEY in metadata else SEED_SETTINGS_KEY
    if SETTINGS_KEY in metadata and SEED_SETTINGS_KEY in metadata:
        param = f"metadata.{SEED_SETTINGS_KEY}"
        raise APIError(
            400, f"send the settings once: {SETTINGS_PARAM} or {param}, not both", param=param
        )
    raw, param = metadata.get(key), f"metadata.{key}"
    if raw is None or not raw.strip():
        return ClientSettings()
    # A JSON document inside a string: its nesting and strings are checked as the body's.
    check_json_text(raw, param)
    try:
        values = json.loads(raw)
    except ValueError as error:
        raise APIError(400, f"{param} is not valid JSON: {error}", param=param) from None
    if not isinstance(values, dict):
        raise APIError(400, f"{param} must be a JSON object", param=param)
    check_json_value(values, param)
    kb = values.pop(KB_SETTING, None)
    if isinstance(kb, list) and kb and all(isinstance(name, str) and name for name in kb):
        kb = tuple(dict.fromkeys(kb))
    elif kb is not None and not (isinstance(kb, str) and kb):
        raise _invalid(
            KB_SETTING, "must be the name of a knowledge base, a list of them or all", key
        )
    show_status = values.pop(STATUS_SETTING, False)
    if not isinstance(show_status, bool):
        raise _invalid(STATUS_SETTING, "must be true or false", key)
    settable = [name for name in OPTION_NAMES if name not in SERVER_ONLY]
    known = [*settable, KB_SETTING, STATUS_SETTING]
    for name in values:
        if name in SERVER_ONLY:
            raise _invalid(name, "is set per knowledge base on the server, not by a client", key)
        if name not in OPTION_NAMES:
            raise _invalid(name, f"unknown setting (use {', '.join(known)})", key)
    try:
        options = parse_options(values)
    except OptionsError as error:
        where, message = error.problems[0]
        name = str(where[0]) if where else SETTINGS_KEY
        raise _invalid(name, message, key) from None
    return ClientSettings(kb, options, show_status)


def resolve(runtime: Runtime, client: ClientSettings) -> tuple[KnowledgeBase, Resolved]:
    """The knowledge base a request asks for and the request resolved once: its store
    opened and its search options, the knowledge base's defaults overridden by the
    client's (the service takes it whole). Blocking: opens the knowledge base.

    Raises:
        APIError: 400 naming ``kb`` or ``scope`` when either is unknown.
    """
    try:
        kb, resolved = runtime.answering(client.kb, client.options)
    except KnowledgeBaseError as error:  # unknown, or an invalid name
        raise _invalid(KB_SETTING, str(error)) from None
    except ConfigurationError as error:
        # The values are valid already: what resolving checks is the scope against the KB
        # and the query rewrite and reranker against the registries.
        raise _invalid(error.field or KB_SETTING, str(error)) from None
    asked = client.options.chat_model
    if asked is not None:
        # A client picks among the models the server is set up with (and the ones packages
        # register by name), not any model name: the knowledge base's default is read
        # from the meta the request already holds (none for a release not built yet).
        stored = KBConfig.from_meta(resolved.meta, default_embedder=runtime.settings.embedder)
        configured = {runtime.settings.llm_model, stored.defaults.chat_model} - {None}
        allowed = configured | set(CHAT_MODELS.plugins())
        if asked not in allowed:
            known = ", ".join(sorted(str(name) for name in allowed)) or "none configured"
            raise _invalid("chat_model", f"not a model of this server (use: {known})")
    return kb, resolved


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


# A conversation's bounds: enough for any real chat, small enough that one request cannot
# make the planner and the prompt builder chew through megabytes.
MAX_MESSAGES = 200
MAX_MESSAGE_CHARS = 100_000


def _ends_with_user(messages: list[Message], param: str) -> list[Message]:
    if len(messages) > MAX_MESSAGES:
        raise APIError(
            400, f"too many messages: {len(messages)}, at most {MAX_MESSAGES}", param=param
        )
    for index, message in enumerate(messages):
        if len(message["content"]) > MAX_MESSAGE_CHARS:
            raise APIError(
                400,
                f"message {index} is {len(message['content']):,} characters, at most "
                f"{MAX_MESSAGE_CHARS:,}",
                param=f"{param}[{index}].content",
            )
    if not messages or messages[-1]["role"] != "user" or not messages[-1]["content"].strip():
        raise APIError(400, "the conversation must end with a user message", param=param)
    return messages


def _tool_turn(item: dict[str, Any]) -> bool:
    """An assistant's tool call without text, or a tool's result: an agent's history,
    which says nothing a documentation answer builds on."""
    if item.get("role") == "tool":
        return True
    return (
        item.get("role") == "assistant"
        and not item.get("content")
        and bool(item.get("tool_calls") or item.get("function_call"))
    )


def chat_messages(request: ChatRequest) -> list[Message]:
    """The conversation of a Chat Completions request (tool-call turns left out)."""
    messages = [_message(item, f"messages[{i}]")
                for i, item in enumerate(request.messages) if not _tool_turn(item)]  # fmt: skip
    return _ends_with_user(messages, "messages")


def responses_messages(request: ResponsesRequest) -> list[Message]:
    """The conversation of a Responses request: ``instructions`` then the ``input`` items.

    Earlier status updates a client sends back (reasoning items, or commentary messages
    of earlier releases) are dropped: they were never part of an answer.
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
        if item.get("type") == "reasoning":
            continue  # the statuses of an earlier answer (its reasoning summary), sent back
        if item.get("type", "message") != "message":
            raise APIError(
                400, f"unsupported input item {item.get('type')!r}", param=f"{param}.type"
            )
        if item.get("phase") == "commentary":
            continue
        messages.append(_message(item, param))
    return _ends_with_user(messages, "input")


def check_model(model: str, models: Collection[str]) -> None:
    if model not in models:
        raise APIError(
            404,
            f"the model {model!r} does not exist (use one of {', '.join(models)})",
            param="model",
            code="model_not_found",
        )
