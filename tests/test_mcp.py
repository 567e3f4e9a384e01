"""``citewise mcp`` over stdio, driven by the mcp package's own client."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

SECTION_URL = (
    "https://ilkersigirci.github.io/langgraph-openai-serve/0.12.0/how-to-guides/"
    "authentication/#api-key-middleware"
)


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
    tools, (search, scoped, keyword, ask, scoped_ask, bad, bad_top_k) = asyncio.run(
        session_calls(
            lgos_home,
            [
                ("search_docs", {"query": question, "top_k": 3}),
                ("search_docs", {"query": question, "scope": "how-to-guides", "top_k": 2}),
                ("search_docs", {"query": question, "top_k": 2, "search_type": "full_text"}),
                ("ask_docs", {"question": question}),
                ("ask_docs", {"question": question, "scope": "how-to-guides", "top_k": 1}),
                ("search_docs", {"query": question, "scope": "nowhere"}),
                ("search_docs", {"query": question, "top_k": 0}),
            ],
        )
    )
    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) == {"search_docs", "ask_docs", "get_section", "list_scopes"}
    options = {"scope", "top_k", "search_type", "query_rewrite", "rerank", "context_window",
               "collapse_sections", "candidates_per_ranker", "context_scope"}  # fmt: skip
    search_params = set(by_name["search_docs"].input_schema["properties"])
    assert search_params == {"query", "doc_ids", "page_prefix", "doc_metadata", *options}
    titles = {name: tool.title for name, tool in by_name.items()}
    assert titles == {
        "search_docs": "Search the docs",
        "ask_docs": "Ask the docs",
        "get_section": "Open a cited section",
        "list_scopes": "List the docs' scopes",
    }
    assert set(by_name["ask_docs"].input_schema["properties"]) == {"question", "verify", *options}

    # One copy of each result: structured; the text is a short listing of titles and URLs.
    results = search.structured_content["results"]
    assert len(results) == 3
    assert results[0]["url"].startswith("https://ilkersigirci.github.io/langgraph-openai-serve/")
    assert any("authentication" in r["url"] for r in results)
    (summary,) = search.content
    assert results[0]["url"] in summary.text and results[0]["text"] not in summary.text
    scoped_results = scoped.structured_content["results"]
    assert len(scoped_results) == 2
    assert all("/how-to-guides/" in r["url"] for r in scoped_results)
    keyword_results = keyword.structured_content["results"]
    assert len(keyword_results) == 2 and all(r["rankers"] == ["keyword"] for r in keyword_results)

    # The answer once: its text is the text content, the citations (spans of that text)
    # and the kind are the structured content.
    answer = ask.structured_content
    (answer_text,) = ask.content
    assert "answer" not in answer
    assert answer["kind"] == "extractive" and answer["citations"]
    span = answer["citations"][0]
    assert span["url"] in answer_text.text[span["start_index"] : span["end_index"]]
    scoped_answer = scoped_ask.structured_content
    assert len({c["url"] for c in scoped_answer["citations"]}) == 1
    assert all("/how-to-guides/" in c["url"] for c in scoped_answer["citations"])

    # The scope is an enum and top_k is bounded, so a client can check before calling;
    # the server still refuses what slips through.
    # One line naming the argument, without pydantic's boilerplate and documentation URL.
    for refused, argument in ((bad, "scope"), (bad_top_k, "top_k")):
        (message,) = refused.content
        assert refused.is_error and message.text.startswith(f"search_docs: {argument}: ")
        assert "\n" not in message.text and "http" not in message.text
        assert "validation error" not in message.text
    assert "nowhere" in bad.content[0].text

    # Each tool says its own thing: no sentence is repeated into every description.
    sentences = [
        {s.strip() for s in (tool.description or "").split(". ") if s.strip()}
        for tool in tools.tools
    ]
    shared = set.intersection(*sentences)
    assert not shared, shared


def test_tools_describe_the_docs_and_are_read_only(lgos_home: Path) -> None:
    tools, (scopes, section, missing) = asyncio.run(
        session_calls(
            lgos_home,
            [
                ("list_scopes", {}),
                ("get_section", {"url": SECTION_URL}),
                ("get_section", {"url": "https://example.org/nowhere/"}),
            ],
        )
    )
    by_name = {tool.name: tool for tool in tools.tools}
    expected_scopes = ["all", "demo", "explanation", "how-to-guides", "library", "tutorials"]
    for tool in by_name.values():
        assert "'lgos' documentation" in (tool.description or "")
        assert "version 0.12.0" in (tool.description or "")
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is not True
    for name in ("search_docs", "ask_docs"):
        properties = by_name[name].input_schema["properties"]
        scope = properties["scope"]["anyOf"][0]
        assert scope["enum"] == expected_scopes
        top_k = properties["top_k"]["anyOf"][0]
        assert (top_k["minimum"], top_k["maximum"]) == (1, 100)
        assert "how-to-guides" in (by_name[name].description or "")

    assert scopes.structured_content == {"scopes": expected_scopes}
    # The section once, as Markdown text (no structured copy of it).
    assert section.structured_content is None
    (content,) = section.content
    text = content.text
    heading = text.splitlines()[0]  # the section whole: its heading, then its text
    assert heading.startswith("#") and heading.endswith("API Key Middleware")
    assert "BaseHTTPMiddleware" in text
    assert "(1)!" not in text and "{ ." not in text  # the site's build markup is gone
    assert missing.is_error and "no section" in missing.content[0].text
