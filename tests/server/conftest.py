"""Servers for the API tests: real uvicorn on 127.0.0.1 over the indexed LGOS docs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI

from citewise.config import Settings
from citewise.errors import ModelError
from citewise.kb import KnowledgeBase
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedCall, ScriptedChatModel, script

SECTION = re.compile(r'<section url="([^"]+)" title="([^"]+)">')


FAIL = "FAIL"
RICH = "RICH"
# Characters a UTF-16 client counts differently from Python (astral emoji, a ZWJ sequence)
# or that look like one character but are two (a combining accent), before a citation.
TRICKY = "👩‍💻 Tip ✨: 日本語の説明, cafe\u0301 🎉"


def cite_first(call: ScriptedCall) -> str:
    """A scripted answer citing the first section of its prompt (a real section URL); a
    question with ``FAIL`` in it makes the model fail instead, one with ``RICH`` gets
    Markdown with code, a table and emoji around two citations."""
    if FAIL in call.last:
        raise ModelError("the chat model failed: scripted outage")
    found = SECTION.search(call.messages[-1].text)
    assert found is not None, "the answer prompt holds no documentation"
    url, title = found.groups()
    if RICH in call.last:
        return rich_answer(title, url)
    return f"Use the middleware described in [{title}]({url}). Then restart the server."


def rich_answer(title: str, url: str) -> str:
    return (
        f"{TRICKY} Use the **middleware** described in [{title}]({url}).\n\n"
        "```python\napp.add_middleware(ApiKeyMiddleware)\n```\n\n"
        "| Setting | Value |\n|---|---|\n| **API key** | `secret` 🔑 |\n\n"
        f"Then restart the server 🚀🚀 ([{title}]({url}))."
    )


def client(url: str, key: str = "unused") -> OpenAI:
    return OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=60)


@pytest.fixture(scope="session")
def extractive_url(lgos_home: Path) -> Iterator[str]:
    """A server with no chat model: extractive answers from ``lgos``."""
    app = create_app(Settings(home=lgos_home), ServerOptions(kb="lgos"), model_factory=lambda: None)
    with running(app) as url:
        yield url


@pytest.fixture(scope="session")
def scripted_model() -> ScriptedChatModel:
    return ScriptedChatModel(reply=script(answer=cite_first))


@pytest.fixture(scope="session")
def scripted_url(lgos_home: Path, scripted_model: ScriptedChatModel) -> Iterator[str]:
    """A server whose chat model is scripted: deterministic written answers."""
    app = create_app(
        Settings(home=lgos_home), ServerOptions(kb="lgos"), model_factory=lambda: scripted_model
    )
    with running(app) as url:
        yield url


@pytest.fixture(scope="session")
def scripted(scripted_url: str) -> Iterator[OpenAI]:
    """The openai SDK's client for the scripted-model server."""
    with client(scripted_url) as sdk:
        yield sdk


@pytest.fixture(scope="session")
def extractive(extractive_url: str) -> Iterator[OpenAI]:
    """The openai SDK's client for the extractive server."""
    with client(extractive_url) as sdk:
        yield sdk


@pytest.fixture(scope="session")
def lgos_scopes(lgos_kb: KnowledgeBase) -> tuple[str, ...]:
    return lgos_kb.scopes


def settings_metadata(**values: Any) -> dict[str, str]:
    import json

    return {"citewise_settings": json.dumps(values)}
