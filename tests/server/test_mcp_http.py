"""``/mcp`` in ``citewise serve``: the library tools over streamable HTTP, with the official
``mcp`` client, behind the server's API keys."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from citewise.server import ServerOptions, create_app
from citewise.server.testing import running

from ..kb.libraries import three_libraries

pytest.importorskip("mcp", reason="the mcp extra is not installed")

KEY = "mcp-test-key"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    library = three_libraries(tmp_path_factory.mktemp("mcp-http"))
    options = ServerOptions(api_keys=frozenset({KEY}))
    app = create_app(library.settings, options, library=library, model_factory=lambda: None)
    with running(app) as base:
        yield base


async def calls(url: str, todo: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[Any]]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {KEY}"})
    async with (
        http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        return tools, [await session.call_tool(name, arguments) for name, arguments in todo]


def test_resolve_then_search_within_a_token_budget(url: str) -> None:
    tools, (resolved, searched, small, listed) = asyncio.run(
        calls(url, [
            ("resolve_library", {"name": "python-Requests", "version": "2.34.2"}),
            ("search_docs", {"query": "timeouts and sessions", "libraries": ["requests"],
                             "tokens": 400}),
            ("search_docs", {"query": "timeouts and sessions", "libraries": ["requests"],
                             "tokens": 60}),
            ("list_libraries", {}),
        ])
    )  # fmt: skip
    names = {tool.name for tool in tools.tools}
    assert names == {"resolve_library", "list_libraries", "search_docs", "get_section",
                     "ask_docs"}  # fmt: skip
    card = resolved.structured_content
    assert (card["kb"], card["package"], card["version"]) == ("requests", "requests", "2.34.2")
    found = searched.structured_content
    assert found["results"] and {r["library"] for r in found["results"]} == {"requests"}
    assert found["results"][0]["version"] == "2.34.2"
    assert 0 < found["tokens"] <= 400 and found["tokenizer"] == "minilm tokenizer"
    cut = small.structured_content
    assert cut["tokens"] <= 60 and cut["truncated"] and len(cut["results"]) == 1
    listed_names = [entry["kb"] for entry in listed.structured_content["libraries"]]
    assert listed_names == ["handbook", "lgos", "requests"]


def test_a_search_naming_no_library_is_routed_and_answers_cite(url: str) -> None:
    _, (routed, asked) = asyncio.run(
        calls(url, [
            ("search_docs", {"query": "How do I set API key middleware in LGOS?"}),
            ("ask_docs", {"question": "How do I set a timeout in requests?"}),
        ])
    )  # fmt: skip
    assert {r["library"] for r in routed.structured_content["results"]} == {"lgos"}
    assert asked.structured_content["citations"]
    assert "requests 2.34.2" in asked.content[0].text


def test_an_unknown_library_names_the_known_ones_with_versions(url: str) -> None:
    _, (unknown, unknown_search) = asyncio.run(
        calls(url, [
            ("resolve_library", {"name": "flask"}),
            ("search_docs", {"query": "routing", "libraries": ["flask"]}),
        ])
    )  # fmt: skip
    for result in (unknown, unknown_search):
        assert result.is_error
        text = result.content[0].text
        assert "'flask'" in text and "requests (requests 2.34.2)" in text
        assert "lgos (langgraph-openai-serve 0.12.0)" in text


def test_mcp_needs_the_api_key(url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    refused = httpx.post(f"{url}/mcp", json=body)
    assert refused.status_code == 401
    assert "missing API key" in refused.json()["error"]["message"]
    wrong = httpx.post(f"{url}/mcp", json=body, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
