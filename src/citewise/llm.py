"""Chat models: the factory (OpenAI-compatible endpoint or local llama.cpp) and structured calls.

Heavy imports (langchain, openai, llama.cpp) happen inside the functions, so importing this
module (to ask :func:`chat_model_configured`) costs nothing on the extractive path.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from citewise import telemetry
from citewise.config import Settings
from citewise.errors import ConfigurationError, ModelError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import RunnableConfig
    from pydantic import BaseModel

LOCAL_MODEL = "local"
"""The ``CITEWISE_LLM_MODEL`` value that selects the local llama.cpp model."""

NOSTREAM_TAG = "nostream"
"""LangGraph's tag for model calls whose tokens must stay out of its ``messages`` stream."""

DEFAULT_TEMPERATURE = 0.0
"""The answer call's temperature unless ``CITEWISE_LLM_TEMPERATURE`` says otherwise: the same
question over the same sections gets the same answer (the grounding check's findings
reproduce)."""

# A string bound: pydantic is imported where a model is called, never by a search.
SchemaT = TypeVar("SchemaT", bound="BaseModel")
log = logging.getLogger(__name__)

# (base URL, model) of endpoints that refused tool calling once: later structured calls go
# straight to JSON mode instead of paying for a failed call every request.
_JSON_MODE_ENDPOINTS: set[tuple[str, str]] = set()
# HTTP statuses with which gateways refuse a `tools` parameter they do not support: client
# errors about the request, and 501. A 500/502/503 is the endpoint failing, not refusing: it
# is raised (after the client's own retries), never taken as "no tools here" for good.
_NO_TOOLS_STATUSES = frozenset({400, 404, 422, 501})


def chat_model_configured(settings: Settings) -> bool:
    """True when ``settings`` name a chat model (an endpoint model or a local GGUF)."""
    return bool(settings.llm_model or settings.llm_gguf)


def chat_model(settings: Settings, *, temperature: float | None = None) -> BaseChatModel | None:
    """The chat model ``settings`` configure, or None (answers are then extractive).

    ``CITEWISE_LLM_MODEL=local`` (or ``CITEWISE_LLM_GGUF`` alone) selects llama.cpp; any
    other model name is served by the OpenAI-compatible endpoint at ``CITEWISE_LLM_BASE_URL``
    (OpenAI itself when unset). ``temperature`` defaults to ``settings.llm_temperature``.
    """
    if not chat_model_configured(settings):
        return None
    if temperature is None:
        temperature = settings.llm_temperature
    if settings.llm_model in (None, LOCAL_MODEL):
        from citewise.llamacpp import find_gguf, local_chat_model

        return local_chat_model(
            find_gguf(settings),
            temperature=temperature,
            n_threads=settings.llm_threads,
            n_threads_batch=settings.llm_batch_threads,
        )
    assert settings.llm_model is not None
    return openai_chat_model(
        settings.llm_model,
        base_url=settings.llm_base_url,
        api_key=settings.llm_api_key,
        temperature=temperature,
    )


def openai_chat_model(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    temperature: float = DEFAULT_TEMPERATURE,
    timeout: float = 120.0,
    max_retries: int = 2,
) -> BaseChatModel:
    """``model`` behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Works with OpenAI, vLLM, Ollama, LiteLLM and other gateways. A self-hosted endpoint
    usually needs no key; OpenAI itself needs ``CITEWISE_LLM_API_KEY`` (or ``OPENAI_API_KEY``).
    """
    from langchain_openai import ChatOpenAI
    from openai import OpenAIError

    if api_key is None and base_url is not None:
        api_key = "unused"  # the client insists on a key; self-hosted servers ignore it
    try:
        return ChatOpenAI(
            model=model,
            base_url=base_url,
            api_key=api_key,  # type: ignore[arg-type]  # str is coerced to SecretStr
            temperature=temperature,
            timeout=timeout,
            max_retries=max_retries,
            # Gateways implement Chat Completions far more widely than the Responses API.
            use_responses_api=False,
            # The endpoint's token counts, also for streamed answers (telemetry reads them).
            stream_usage=True,
        )
    except OpenAIError as error:
        raise ConfigurationError(
            f"cannot use chat model {model!r}: {error} (set CITEWISE_LLM_API_KEY, or "
            "CITEWISE_LLM_BASE_URL for a self-hosted endpoint)"
        ) from error


def at_temperature_zero(model: BaseChatModel) -> BaseChatModel:
    """A copy of ``model`` at temperature 0 (the same model when it has no temperature)."""
    if "temperature" in type(model).model_fields:
        return model.model_copy(update={"temperature": 0.0})
    return model


@functools.cache
def json_instruction(schema: type[BaseModel]) -> str:
    """The instruction that asks for ``schema`` as bare JSON (JSON mode and grammars);
    made once per schema, not once per call."""
    return (
        "Reply with one JSON object and nothing else. It must match this JSON schema:\n"
        + json.dumps(schema.model_json_schema(), separators=(",", ":"))
    )


def _with_instruction(messages: Sequence[BaseMessage], text: str) -> list[BaseMessage]:
    """``messages`` with ``text`` added to the leading system message (some chat templates
    accept a system message only first)."""
    from langchain_core.messages import SystemMessage

    if messages and isinstance(messages[0], SystemMessage):
        return [SystemMessage(f"{messages[0].text}\n\n{text}"), *messages[1:]]
    return [SystemMessage(text), *messages]


def _is_openai(model: BaseChatModel) -> bool:
    try:
        from langchain_openai import ChatOpenAI
    except ImportError:  # pragma: no cover - a dependency, but keep the seam honest
        return False
    return isinstance(model, ChatOpenAI)


def _endpoint(model: BaseChatModel) -> tuple[str, str]:
    return (str(getattr(model, "openai_api_base", "")), str(getattr(model, "model_name", "")))


def _refused_tools(error: Exception) -> bool:
    """True when ``error`` looks like an endpoint (or model) that cannot do tool calling."""
    from langchain_core.exceptions import OutputParserException
    from pydantic import ValidationError

    if isinstance(error, OutputParserException | ValidationError):
        return True
    return getattr(error, "status_code", None) in _NO_TOOLS_STATUSES


async def astructured(
    model: BaseChatModel,
    schema: type[SchemaT],
    messages: Sequence[BaseMessage],
    *,
    tags: Sequence[str] = (),
) -> SchemaT:
    """One call that returns a validated ``schema`` instance.

    An OpenAI-compatible endpoint is asked through tool calling; when it refuses tools (a
    400/404/422/501 answer, or a reply with no tool call), the call is repeated once in JSON
    mode with the schema in the prompt and validated by pydantic, and the endpoint is
    remembered so later calls go straight to JSON mode. A server error (5xx) is raised as
    the endpoint failing; it changes nothing for later calls. Other models use their own
    ``with_structured_output`` (the local model constrains decoding with a JSON-schema
    grammar). The call is tagged ``nostream`` so none of its tokens reach a token stream.

    Raises:
        ModelError: the reply could not be turned into a valid ``schema``.
        openai.APIError: the endpoint failed (a 5xx after the client's retries, a timeout).
    """
    from langchain_core.exceptions import OutputParserException
    from pydantic import ValidationError

    track_model_calls()
    config: RunnableConfig = {"tags": [*tags, NOSTREAM_TAG], "run_name": schema.__name__}
    with_json = _with_instruction(messages, json_instruction(schema))
    try:
        if not _is_openai(model):
            result: Any = await model.with_structured_output(schema).ainvoke(with_json, config)
        elif _endpoint(model) in _JSON_MODE_ENDPOINTS:
            runnable = model.with_structured_output(schema, method="json_mode")
            result = await runnable.ainvoke(with_json, config)
        else:
            result = await _tools_then_json(model, schema, messages, with_json, config)
    except (OutputParserException, ValidationError) as error:
        raise ModelError(f"the chat model's {schema.__name__} reply is not valid") from error
    if not isinstance(result, schema):
        raise ModelError(f"the chat model gave no {schema.__name__} reply")
    return result


async def _tools_then_json(
    model: BaseChatModel,
    schema: type[SchemaT],
    messages: Sequence[BaseMessage],
    with_json: Sequence[BaseMessage],
    config: RunnableConfig,
) -> Any:
    try:
        runnable = model.with_structured_output(schema, method="function_calling")
        result = await runnable.ainvoke(list(messages), config)
        if isinstance(result, schema):
            return result
    except Exception as error:
        if not _refused_tools(error):
            raise
        log.warning("structured output by tool calling failed (%s); retrying in JSON mode", error)
    _JSON_MODE_ENDPOINTS.add(_endpoint(model))
    return await model.with_structured_output(schema, method="json_mode").ainvoke(
        list(with_json), config
    )


# (base URL, model) of endpoints that refused a client's ``response_format`` (json_schema)
# once: later calls ask them for JSON mode with the schema in the prompt.
_NO_SCHEMA_ENDPOINTS: set[tuple[str, str]] = set()


def format_instruction(response_format: Mapping[str, Any]) -> str:
    """The prompt's part of a Chat Completions ``response_format``: one JSON object, and the
    schema when it gives one."""
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    if not isinstance(schema, Mapping):
        return "Reply with one JSON object and nothing else."
    return (
        "Reply with one JSON object and nothing else. It must match this JSON schema:\n"
        + json.dumps(schema, separators=(",", ":"))
    )


async def ajson_reply(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    response_format: Mapping[str, Any],
    *,
    tags: Sequence[str] = (),
) -> Any:
    """One call whose reply is the JSON value ``response_format`` (a Chat Completions
    ``json_schema`` or ``json_object`` format) asks for, parsed.

    An OpenAI-compatible endpoint gets ``response_format`` as is (and the schema in the
    prompt); one that refuses it (a 400/404/422/501) is asked again in JSON mode
    (``json_object``), and remembered so later calls go straight there. Other models get the
    schema in the prompt. The call is tagged ``nostream``.

    Raises:
        ModelError: the reply is not one JSON object.
        openai.APIError: the endpoint failed (a 5xx after the client's retries, a timeout).
    """
    track_model_calls()
    config: RunnableConfig = {"tags": [*tags, NOSTREAM_TAG], "run_name": "json_reply"}
    prompt = _with_instruction(messages, format_instruction(response_format))
    runnable: Any = model
    if _is_openai(model):
        endpoint = _endpoint(model)
        if response_format.get("type") == "json_schema" and endpoint not in _NO_SCHEMA_ENDPOINTS:
            try:
                reply = await model.bind(response_format=dict(response_format)).ainvoke(
                    prompt, config
                )
                return _json_value(reply.text)
            except Exception as error:
                if getattr(error, "status_code", None) not in _NO_TOOLS_STATUSES:
                    raise
                log.warning("the endpoint refused response_format (%s); using JSON mode", error)
                _NO_SCHEMA_ENDPOINTS.add(endpoint)
        runnable = model.bind(response_format={"type": "json_object"})
    reply = await runnable.ainvoke(prompt, config)
    return _json_value(reply.text)


def _json_value(text: str) -> Any:
    """The JSON object of a reply (a code fence around it is taken off)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        value = json.loads(body)
    except json.JSONDecodeError as error:
        raise ModelError(f"the chat model's JSON reply is not valid JSON: {error}") from error
    if not isinstance(value, dict):
        raise ModelError("the chat model's JSON reply is not a JSON object")
    return value


@functools.cache
def track_model_calls() -> None:
    """Report every chat model call made in this process to :mod:`citewise.telemetry`: its
    purpose (the ``citewise:…`` tag), duration, outcome and the endpoint's token ``usage``.

    Registered once, as a LangChain configure hook, so every model (endpoint, local, scripted)
    is seen without passing callbacks around (which would replace the graph's own).
    """
    from contextvars import ContextVar

    from langchain_core.tracers.context import register_configure_hook

    handler = _usage_handler()
    hook: ContextVar[Any | None] = ContextVar("citewise_model_calls", default=handler)
    register_configure_hook(hook, inheritable=True)


def _usage_handler() -> Any:
    from uuid import UUID

    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.outputs import ChatGeneration, LLMResult

    class ModelCalls(BaseCallbackHandler):
        run_inline = True  # in the caller's context, where telemetry's observers are

        def __init__(self) -> None:
            self.started: dict[UUID, tuple[float, str]] = {}

        def on_chat_model_start(
            self, serialized: Any, messages: Any, *, run_id: UUID, tags: Any = None, **kw: Any
        ) -> None:
            self.started[run_id] = (time.perf_counter(), _purpose(tags))

        def _done(
            self, run_id: UUID, error: BaseException | None, values: dict[str, float]
        ) -> None:
            began, purpose = self.started.pop(run_id, (time.perf_counter(), "other"))
            telemetry.record(
                "model_call", seconds=time.perf_counter() - began, values=values,
                error=type(error).__name__ if error else None,
                cause=str(error) if error else None, purpose=purpose,
            )  # fmt: skip

        def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kw: Any) -> None:
            values: dict[str, float] = {}
            for generation in (one for batch in response.generations for one in batch):
                message = generation.message if isinstance(generation, ChatGeneration) else None
                usage = getattr(message, "usage_metadata", None)
                if usage:
                    for name, key in (("prompt_tokens", "input_tokens"),
                                      ("completion_tokens", "output_tokens")):  # fmt: skip
                        values[name] = values.get(name, 0) + usage.get(key, 0)
            self._done(run_id, None, values)

        def on_llm_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
            self._done(run_id, error, {})

    return ModelCalls()


def _purpose(tags: Any) -> str:
    """``plan``, ``answer``, ``grade``… from a call's ``citewise:`` tag."""
    for tag in tags or ():
        if isinstance(tag, str) and tag.startswith("citewise:"):
            return tag.removeprefix("citewise:")
    return "other"
