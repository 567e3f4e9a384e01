"""Servers for the API tests: real uvicorn on 127.0.0.1 over the indexed LGOS docs."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from openai import OpenAI
from pydantic import Field

from citewise.config import Settings
from citewise.errors import ModelError
from citewise.kb import KnowledgeBase
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedCall, ScriptedChatModel, script

SECTION = re.compile(r'<section url="([^"]+)" title="([^"]+)">')


def pytest_runtest_setup(item: pytest.Item) -> None:
    # Before the fixtures: a browser test's knowledge base takes minutes to index.
    if item.get_closest_marker("browser") is not None:
        from tests.server.test_web import browser_or_skip

        browser_or_skip()


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


ENDLESS_WORDS = 10_000


class EndlessModel(ScriptedChatModel):
    """Streams word after word (far more than any test reads) and records when it stops.

    With ``endless_when`` set, only a question containing it streams endlessly; any other
    gets the script's reply.
    """

    produced: list[int] = Field(default_factory=list)
    stopped: threading.Event = Field(default_factory=threading.Event)
    endless_when: str = ""

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        if self.endless_when and self.endless_when not in messages[-1].text:
            async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
                yield chunk
            return
        try:
            for number in range(ENDLESS_WORDS):
                self.produced.append(number)
                yield ChatGenerationChunk(message=AIMessageChunk(content=f"word{number} "))
                await asyncio.sleep(0.01)  # a model's pace; the test waits on events, not time
        finally:
            self.stopped.set()


def cli_indexed_home(
    tmp_path: Path, docs: dict[str, str], *index_args: str, kb: str = "notes"
) -> Path:
    """A home (set as CITEWISE_HOME by the caller) whose knowledge base ``kb`` was made by
    ``citewise index`` from ``docs`` (file name → text)."""
    from citewise.cli import main

    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in docs.items():
        (folder / name).write_text(text)
    assert main(["index", str(folder), "--kb", kb, *index_args]) == 0
    return tmp_path / "home"


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
