"""The chat model factory and structured calls, through the real langchain-openai client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from citewise.config import Settings
from citewise.errors import ConfigurationError, MissingExtraError, ModelError
from citewise.graph.prompts import Plan
from citewise.llm import (
    astructured,
    at_temperature_zero,
    chat_model,
    chat_model_configured,
    openai_chat_model,
)
from citewise.testing import OpenAIStub, ScriptedChatModel, StubReply, script

PLAN = {"needs_docs": True, "queries": ["install the package"]}
MESSAGES = [SystemMessage("Plan the search."), HumanMessage("How do I install it?")]


def test_no_model_configured_means_none(tmp_path: Any) -> None:
    settings = Settings(home=tmp_path)
    assert not chat_model_configured(settings) and chat_model(settings) is None


def test_an_endpoint_model_is_a_chat_completions_client(tmp_path: Any) -> None:
    from langchain_openai import ChatOpenAI

    settings = Settings(
        home=tmp_path, llm_model="qwen2.5", llm_base_url="http://127.0.0.1:9/v1", llm_api_key=None
    )
    model = chat_model(settings)
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "qwen2.5" and model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.use_responses_api is False
    zero = at_temperature_zero(model)
    assert isinstance(zero, ChatOpenAI) and zero.temperature == 0.0 and model.temperature == 0.0


def test_the_answer_temperature_is_0_unless_configured(tmp_path: Any) -> None:
    from langchain_openai import ChatOpenAI

    endpoint = {"CITEWISE_HOME": str(tmp_path), "CITEWISE_LLM_MODEL": "m",
                "CITEWISE_LLM_BASE_URL": "http://127.0.0.1:9/v1"}  # fmt: skip
    assert Settings.from_env(endpoint).llm_temperature == 0.0
    settings = Settings.from_env({**endpoint, "CITEWISE_LLM_TEMPERATURE": "0.4"})
    model = chat_model(settings)
    assert isinstance(model, ChatOpenAI) and model.temperature == 0.4
    for bad in ("hot", "-1", "3"):
        with pytest.raises(ConfigurationError, match="CITEWISE_LLM_TEMPERATURE"):
            Settings.from_env({**endpoint, "CITEWISE_LLM_TEMPERATURE": bad})


def test_openai_itself_without_a_key_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="CITEWISE_LLM_API_KEY"):
        openai_chat_model("gpt-4o-mini")


def test_the_local_model_names_its_extra_when_llama_cpp_is_missing(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 16)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails as if not installed
    settings = Settings(home=tmp_path, llm_model="local", llm_gguf=str(gguf))
    with pytest.raises(MissingExtraError, match=r"citewise\[local\]"):
        chat_model(settings)


def plan_by_tools(body: dict[str, Any]) -> StubReply:
    if body.get("tools"):
        return StubReply(tool_call=("Plan", PLAN))
    return StubReply(status=400, content="expected a tool call")


def test_structured_output_uses_tool_calling_at_temperature_zero() -> None:
    with OpenAIStub(plan_by_tools) as stub:
        model = at_temperature_zero(openai_chat_model("m", base_url=stub.base_url))
        plan = asyncio.run(astructured(model, Plan, MESSAGES, tags=["citewise:plan"]))
    assert plan == Plan(**PLAN)
    (request,) = stub.requests
    assert request["temperature"] == 0.0 and not request.get("stream")
    assert [tool["function"]["name"] for tool in request["tools"]] == ["Plan"]
    assert request["messages"][-1] == {"role": "user", "content": "How do I install it?"}


def json_only(body: dict[str, Any]) -> StubReply:
    if body.get("tools"):
        return StubReply(status=400, content="tools are not supported by this model")
    assert body.get("response_format") == {"type": "json_object"}
    # JSON mode relies on the prompt: it must carry the schema.
    assert '"needs_docs"' in body["messages"][0]["content"]
    return StubReply(content=json.dumps(PLAN))


def test_an_endpoint_without_tools_falls_back_to_json_mode_once() -> None:
    with OpenAIStub(json_only) as stub:
        model = openai_chat_model("m", base_url=stub.base_url)
        first = asyncio.run(astructured(model, Plan, MESSAGES))
        second = asyncio.run(astructured(model, Plan, MESSAGES))
    assert first == second == Plan(**PLAN)
    # The refusal is remembered: the second call goes straight to JSON mode.
    assert [bool(r.get("tools")) for r in stub.requests] == [True, False, False]


def test_a_reply_that_is_not_the_schema_is_a_model_error() -> None:
    def garbage(body: dict[str, Any]) -> StubReply:
        if body.get("tools"):
            return StubReply(content="I think you should search for install.")
        return StubReply(content="{not json")

    with OpenAIStub(garbage) as stub:
        model = openai_chat_model("m", base_url=stub.base_url)
        with pytest.raises(ModelError, match="Plan"):
            asyncio.run(astructured(model, Plan, MESSAGES))
    assert len(stub.requests) == 2


def test_other_models_use_their_own_structured_output_with_the_schema_in_the_prompt() -> None:
    model = ScriptedChatModel(reply=script(plan=PLAN))
    plan = asyncio.run(astructured(model, Plan, MESSAGES, tags=["x"]))
    assert plan == Plan(**PLAN)
    (call,) = model.calls
    assert call.system.startswith("Plan the search.") and '"queries"' in call.system
    assert call.tags == ["x", "nostream"]


def test_a_transient_server_error_is_raised_and_not_taken_for_a_refusal_of_tools() -> None:
    import openai

    failures = iter(range(3))  # the first call and both of the client's retries fail

    def flaky(body: dict[str, Any]) -> StubReply:
        if next(failures, None) is not None:
            return StubReply(status=500, content="upstream overloaded")
        return plan_by_tools(body)

    with OpenAIStub(flaky) as stub:
        model = openai_chat_model("m", base_url=stub.base_url, max_retries=2)
        with pytest.raises(openai.InternalServerError):
            asyncio.run(astructured(model, Plan, MESSAGES))
        # The endpoint was failing, not refusing tools: the next call still uses them.
        assert asyncio.run(astructured(model, Plan, MESSAGES)) == Plan(**PLAN)
    # 3 calls for the failed question (no JSON-mode retry on top), 1 for the next one.
    assert len(stub.requests) == 4
    assert all(request.get("tools") for request in stub.requests)
    assert not any(request.get("response_format") for request in stub.requests)
