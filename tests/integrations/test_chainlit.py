"""The Chainlit app under the real Chainlit server on 127.0.0.1, driven over its socket.io
protocol (python-socketio client) to a streamed, cited answer; the chat model is a scripted
OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

# The server runs in its own process: this one only needs to know chainlit is installed.
if importlib.util.find_spec("chainlit") is None:
    pytest.skip(
        "chainlit is not installed (pip install 'citewise[chainlit]'; it pins mcp<2, so not "
        "beside citewise[mcp])",
        allow_module_level=True,
    )
socketio = pytest.importorskip("socketio", reason="python-socketio is not installed")

from citewise.testing import OpenAIStub, StubReply  # noqa: E402
from tests.integrations.conftest import KB, SECTION  # noqa: E402

QUESTION = "How do I add API key authentication?"


def endpoint(body: dict[str, Any]) -> StubReply:
    """Plans by tool call; answers citing the first section of its prompt."""
    if body.get("tools"):
        return StubReply(tool_call=("Plan", {"needs_docs": True, "queries": ["API key auth"]}))
    found = SECTION.search(body["messages"][-1]["content"])
    assert found is not None, "the answer prompt holds no documentation"
    url, title = found.groups()
    return StubReply(content=f"Add the API key middleware from [{title}]({url}), then restart.")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def chainlit_url(docs_home: Path, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    with OpenAIStub(endpoint) as stub:
        env = {
            **os.environ,
            "CITEWISE_HOME": str(docs_home),
            "CITEWISE_LLM_BASE_URL": stub.base_url,
            "CITEWISE_LLM_MODEL": "stub-model",
            "CITEWISE_LLM_API_KEY": "unused",
        }
        command = [sys.executable, "-m", "citewise", "chainlit", "--kb", KB, "--port", str(port)]
        # Chainlit writes its .chainlit/ config and translations into the working directory.
        server = subprocess.Popen(command, env=env, cwd=tmp_path)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                assert server.poll() is None, "the chainlit server exited"
                try:
                    if httpx.get(url, timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "the chainlit server did not start"
                time.sleep(0.5)
            yield url
        finally:
            server.terminate()
            server.wait(30)


async def ask(
    url: str, question: str, settings: dict[str, Any] | None = None
) -> dict[str, list[Any]]:
    """Send ``question`` as the browser would; collect the server's events until the answer."""
    events: dict[str, list[Any]] = {}
    finished = asyncio.Event()
    client = socketio.AsyncClient()

    names = ("new_message", "update_message", "stream_start", "stream_token", "element")
    for name in (*names, "chat_settings"):

        def record(data: Any, name: str = name) -> None:
            events.setdefault(name, []).append(data)

        client.on(name, record)

    @client.on("task_end")  # type: ignore[misc]
    def end(_: Any = None) -> None:
        if "stream_start" in events:
            finished.set()

    session = str(uuid.uuid4())
    auth = {"clientType": "webapp", "sessionId": session, "userEnv": "{}", "threadId": None}
    await client.connect(url, socketio_path="/ws/socket.io", auth=auth, transports=["websocket"])
    await client.emit("connection_successful")
    if settings is not None:
        # The chat start sends the settings at their defaults: change them after that.
        deadline = time.monotonic() + 30
        while "chat_settings" not in events and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await client.emit("chat_settings_change", settings)
    message = {
        "id": str(uuid.uuid4()),
        "threadId": "",
        "name": "User",
        "type": "user_message",
        "output": question,
        "createdAt": "2026-01-01T00:00:00Z",
    }
    await client.emit("client_message", {"message": message, "fileReferences": []})
    await asyncio.wait_for(finished.wait(), 90)
    await client.disconnect()
    return events


def test_a_streamed_cited_answer_with_steps_and_citation_elements(chainlit_url: str) -> None:
    events = asyncio.run(ask(chainlit_url, QUESTION))
    steps = [m for m in events.get("new_message", []) if m.get("type") == "retrieval"]
    assert "Searching the docs: API key auth" in [step["name"] for step in steps]
    # The first token opens the stream (stream_start's output), the others follow it.
    [start] = events["stream_start"]
    tokens = start["output"] + "".join(t["token"] for t in events["stream_token"])
    assert len(events["stream_token"]) > 3
    assert tokens.startswith("Add the API key middleware from [")
    final = [
        m
        for m in events.get("update_message", []) + events.get("new_message", [])
        if m.get("type") == "assistant_message" and m.get("output")
    ][-1]
    assert "**Sources**" in final["output"] and "/how-to-guides/authentication/" in final["output"]
    [element] = events["element"]
    assert element["type"] == "text" and element["name"].startswith("[1] ")
    assert element["forId"] == final["id"]


def test_the_chat_settings_choose_the_scope_and_bm25(chainlit_url: str) -> None:
    events = asyncio.run(ask(chainlit_url, QUESTION, {"scope": "how-to-guides", "bm25": False}))
    [widgets] = events["chat_settings"]
    by_id = {widget["id"]: widget for widget in widgets}
    assert {item["value"] for item in by_id["scope"]["items"]} == {
        "all",
        "how-to-guides",
        "tutorials",
    }
    assert by_id["bm25"]["initial"] is True
    steps = [m["name"] for m in events.get("new_message", []) if m.get("type") == "retrieval"]
    assert "Searching the how-to-guides docs: API key auth" in steps
