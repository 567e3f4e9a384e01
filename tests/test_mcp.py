"""``citewise mcp`` over stdio, driven by the mcp package's own client."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")


async def session_calls(
    home: Path, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[Any, list[Any]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "citewise", "mcp", "--kb", "lgos"],
        env={"CITEWISE_HOME": str(home)},
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return tools, results


def test_search_and_ask_tools_over_stdio(lgos_home: Path) -> None:
    question = "How do I add API key authentication?"
    tools, (search, scoped, ask, bad) = asyncio.run(
        session_calls(
            lgos_home,
            [
                ("search_docs", {"query": question, "k": 3}),
                ("search_docs", {"query": question, "scope": "how-to-guides", "k": 2}),
                ("ask_docs", {"question": question}),
                ("search_docs", {"query": question, "scope": "nowhere"}),
            ],
        )
    )
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == {"search_docs", "ask_docs"}
    assert set(by_name["search_docs"].input_schema["properties"]) == {"query", "scope", "k"}

    results = json.loads(search.content[0].text)["results"]
    assert len(results) == 3
    assert results[0]["url"].startswith("https://ilkersigirci.github.io/langgraph-openai-serve/")
    assert any("authentication" in r["url"] for r in results)
    scoped_results = json.loads(scoped.content[0].text)["results"]
    assert len(scoped_results) == 2
    assert all("/how-to-guides/" in r["url"] for r in scoped_results)

    answer = json.loads(ask.content[0].text)
    assert answer["kind"] == "extractive" and answer["citations"]
    span = answer["citations"][0]
    assert span["url"] in answer["answer"][span["start_index"] : span["end_index"]]

    assert bad.is_error and "unknown scope 'nowhere'" in bad.content[0].text
