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
    tools, (search, scoped, keyword, old_k, ask, scoped_ask, bad, bad_top_k) = asyncio.run(
        session_calls(
            lgos_home,
            [
                ("search_docs", {"query": question, "top_k": 3}),
                ("search_docs", {"query": question, "scope": "how-to-guides", "top_k": 2}),
                ("search_docs", {"query": question, "top_k": 2, "search_type": "full_text"}),
                ("search_docs", {"query": question, "k": 3}),
                ("ask_docs", {"question": question}),
                ("ask_docs", {"question": question, "scope": "how-to-guides", "top_k": 1}),
                ("search_docs", {"query": question, "scope": "nowhere"}),
                ("search_docs", {"query": question, "top_k": 0}),
            ],
        )
    )
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == {"search_docs", "ask_docs"}
    options = {"scope", "top_k", "search_type", "query_rewrite", "rerank", "context_window"}
    search_params = set(by_name["search_docs"].input_schema["properties"])
    assert search_params == {"query", "doc_ids", "page_prefix", "k", *options}
    assert set(by_name["ask_docs"].input_schema["properties"]) == {"question", *options}

    results = json.loads(search.content[0].text)["results"]
    assert len(results) == 3
    assert results[0]["url"].startswith("https://ilkersigirci.github.io/langgraph-openai-serve/")
    assert any("authentication" in r["url"] for r in results)
    scoped_results = json.loads(scoped.content[0].text)["results"]
    assert len(scoped_results) == 2
    assert all("/how-to-guides/" in r["url"] for r in scoped_results)
    keyword_results = json.loads(keyword.content[0].text)["results"]
    assert len(keyword_results) == 2 and all(r["rankers"] == ["keyword"] for r in keyword_results)
    # ``k`` is the deprecated name of ``top_k``.
    assert json.loads(old_k.content[0].text)["results"] == results

    answer = json.loads(ask.content[0].text)
    assert answer["kind"] == "extractive" and answer["citations"]
    span = answer["citations"][0]
    assert span["url"] in answer["answer"][span["start_index"] : span["end_index"]]
    scoped_answer = json.loads(scoped_ask.content[0].text)
    assert len({c["url"] for c in scoped_answer["citations"]}) == 1
    assert all("/how-to-guides/" in c["url"] for c in scoped_answer["citations"])

    assert bad.is_error and "unknown scope 'nowhere'" in bad.content[0].text
    assert bad_top_k.is_error and "top_k" in bad_top_k.content[0].text
