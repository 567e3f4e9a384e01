"""``citewise mcp``: the docs as MCP tools (``search_docs``, ``ask_docs``) over stdio.

Coding agents (Claude Code, Cursor, …) start ``citewise mcp --kb NAME`` as a subprocess and
call the tools; the official ``mcp`` package speaks the protocol (``pip install
'citewise[mcp]'``).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from citewise.config import RequestSettings, Settings
from citewise.errors import CitewiseError, MissingExtraError
from citewise.knowledge import ALL_SCOPES, KnowledgeBase

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

MAX_K = 50
INSTRUCTIONS = (
    "Answers questions about a documentation set. search_docs returns the matching sections "
    "with their URLs; ask_docs returns an answer that cites them. Prefer citing the URLs."
)

__all__ = ["build_server", "serve"]


def _mcp_classes() -> tuple[Any, type[Exception]]:
    """The server class and the tool error whose message reaches the client (mcp 2.x
    ``MCPServer``, or 1.x ``FastMCP``)."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ModuleNotFoundError as error:
        if error.name is not None and error.name.split(".")[0] != "mcp":
            raise
        try:
            from mcp.server.fastmcp import FastMCP  # type: ignore[attr-defined,unused-ignore]
            from mcp.server.fastmcp.exceptions import (  # type: ignore[import-not-found,unused-ignore]
                ToolError as FastMCPToolError,
            )
        except ImportError:
            raise MissingExtraError("mcp", "mcp", "citewise mcp") from None
        return FastMCP, FastMCPToolError
    return MCPServer, ToolError


def build_server(kb: KnowledgeBase) -> MCPServer[Any]:
    """An MCP server whose tools search and answer from ``kb``."""
    from citewise.answering import aanswer
    from citewise.llm import chat_model

    server_class, tool_error = _mcp_classes()
    server: MCPServer[Any] = server_class(name="citewise", instructions=INSTRUCTIONS)
    model = chat_model(kb.settings)

    @server.tool()
    def search_docs(query: str, scope: str = ALL_SCOPES, k: int = 5) -> dict[str, Any]:
        """Search the documentation: the best-matching sections, each with its URL (link
        to it when you use it), heading path, score and text.

        Args:
            query: what to look for, in words the docs would use.
            scope: ``all`` or one part of the docs (``scopes`` lists them).
            k: how many sections (1-50).
        """
        if not 1 <= k <= MAX_K:
            raise tool_error(f"k must be between 1 and {MAX_K}, not {k}")
        try:
            hits = kb.search(query, k=k, scope=scope)
        except CitewiseError as error:
            raise tool_error(str(error)) from None
        results = [hit.as_json() for hit in hits]
        return {"results": results, "scopes": list(kb.scopes)}

    @server.tool()
    async def ask_docs(question: str) -> dict[str, Any]:
        """Answer a question from the documentation, citing the sections used (each
        citation a span of the answer with the section's URL)."""
        try:
            answer = await aanswer(question, kb, model, settings=RequestSettings())
        except CitewiseError as error:
            raise tool_error(str(error)) from None
        citations = [asdict(citation) for citation in answer.citations]
        return {"answer": answer.text, "kind": answer.kind, "citations": citations}

    return server


def serve(kb_name: str, settings: Settings) -> None:
    """Serve the tools for ``kb_name`` over stdio until the client closes the pipe."""
    kb = KnowledgeBase(kb_name, settings=settings)
    kb.scopes  # noqa: B018  - fail now, with a clear message, on an unknown knowledge base
    build_server(kb).run("stdio")
