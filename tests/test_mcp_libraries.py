"""``citewise mcp --all`` over stdio: every knowledge base as libraries, with the official
``mcp`` client."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from citewise.kb.catalog import card_of

from .kb.libraries import three_libraries

pytest.importorskip("mcp", reason="the mcp extra is not installed")


async def calls(home: Path, todo: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = StdioServerParameters(
        command=sys.executable, args=["-m", "citewise", "mcp", "--all"],
        env={"CITEWISE_HOME": str(home), "PYTHONPATH": ":".join(sys.path)},
    )  # fmt: skip
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return [await session.call_tool(name, arguments) for name, arguments in todo]


def test_resolve_search_and_open_a_section_over_stdio(tmp_path: Path) -> None:
    library = three_libraries(tmp_path)
    resolved, searched, unknown = asyncio.run(
        calls(library.settings.home, [
            ("resolve_library", {"name": "langgraph_openai_serve"}),
            ("search_docs", {"query": "register a graph", "libraries": ["lgos"], "tokens": 200}),
            ("resolve_library", {"name": "lgos", "version": "9.9"}),
        ])
    )  # fmt: skip
    assert resolved.structured_content["kb"] == "lgos"
    assert resolved.structured_content["version"] == card_of(library.open("lgos")).version
    found = searched.structured_content
    assert found["results"][0]["library"] == "lgos" and found["tokens"] <= 200
    url = found["results"][0]["url"]
    (opened,) = asyncio.run(calls(library.settings.home, [("get_section", {"url": url})]))
    assert "Register a LangGraph graph" in opened.content[0].text
    assert unknown.is_error and "no library 'lgos' 9.9" in unknown.content[0].text


def test_kb_and_all_are_one_or_the_other(tmp_path: Path) -> None:
    from citewise.cli import main

    assert main(["mcp", "--all", "--kb", "lgos"]) == 1
