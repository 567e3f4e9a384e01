"""``citewise mcp``: the docs as MCP tools (``search_docs``, ``ask_docs``) over stdio.

Coding agents (Claude Code, Cursor, …) start ``citewise mcp --kb NAME`` as a subprocess and
call the tools; the official ``mcp`` package speaks the protocol (``pip install
'citewise[mcp]'``). Both tools take the search options of ``citewise.options`` (``None``
keeps the knowledge base's default) and call the knowledge base's own search and answer.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from citewise.config import Settings
from citewise.errors import CitewiseError, MissingExtraError
from citewise.kb import KnowledgeBase, Library
from citewise.options import QueryRewrite, Rerank, SearchType

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger(__name__)

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


def _overrides(**values: Any) -> dict[str, Any]:
    """The options a tool call set (``None``: the knowledge base's default)."""
    return {name: value for name, value in values.items() if value is not None}


def build_server(kb: KnowledgeBase) -> MCPServer[Any]:
    """An MCP server whose tools search and answer from ``kb`` (its chat model, if any,
    writes the answers; without one they are extractive)."""
    server_class, tool_error = _mcp_classes()
    server: MCPServer[Any] = server_class(name="citewise", instructions=INSTRUCTIONS)

    @server.tool()
    async def search_docs(
        query: str,
        scope: str | None = None,
        top_k: int | None = None,
        search_type: SearchType | None = None,
        query_rewrite: QueryRewrite | None = None,
        rerank: Rerank | None = None,
        context_window: int | None = None,
        doc_ids: list[str] | None = None,
        page_prefix: str | None = None,
        k: int | None = None,
    ) -> dict[str, Any]:
        """Search the documentation: the best-matching sections, each with its URL (link
        to it when you use it), heading path, score and text. Options left out keep the
        knowledge base's defaults.

        Args:
            query: what to look for, in words the docs would use.
            scope: ``all`` or one part of the docs (``scopes`` lists them).
            top_k: how many sections (1-100).
            search_type: ``hybrid`` (meaning and keywords), ``vector`` or ``full_text``.
            query_rewrite: ``off``, ``hyde``, ``multi_query`` or ``step_back`` (needs a
                chat model).
            rerank: ``off``, ``cross_encoder`` or ``llm``.
            context_window: neighbouring chunks of the same section to add to each hit.
            doc_ids: only these documents.
            page_prefix: only pages whose path starts with this.
            k: deprecated name of ``top_k``.
        """
        if k is not None:
            log.warning("search_docs: 'k' is deprecated: use top_k")
            top_k = top_k if top_k is not None else k
        options = _overrides(
            scope=scope, top_k=top_k, search_type=search_type, query_rewrite=query_rewrite,
            rerank=rerank, context_window=context_window, doc_ids=doc_ids,
            page_prefix=page_prefix,
        )  # fmt: skip
        try:
            hits = await kb.asearch(query, options)
        except CitewiseError as error:
            raise tool_error(str(error)) from None
        results = [hit.as_json() for hit in hits]
        return {"results": results, "scopes": list(kb.scopes)}

    @server.tool()
    async def ask_docs(
        question: str,
        scope: str | None = None,
        top_k: int | None = None,
        search_type: SearchType | None = None,
        query_rewrite: QueryRewrite | None = None,
        rerank: Rerank | None = None,
        context_window: int | None = None,
    ) -> dict[str, Any]:
        """Answer a question from the documentation, citing the sections used (each
        citation a span of the answer with the section's URL). Options left out keep the
        knowledge base's defaults.

        Args:
            question: the question, in your own words.
            scope: ``all`` or one part of the docs.
            top_k: how many sections to read per search (1-100).
            search_type: ``hybrid``, ``vector`` or ``full_text``.
            query_rewrite: ``off``, ``hyde``, ``multi_query`` or ``step_back``.
            rerank: ``off``, ``cross_encoder`` or ``llm``.
            context_window: neighbouring chunks of the same section to add to each hit.
        """
        options = _overrides(
            scope=scope, top_k=top_k, search_type=search_type, query_rewrite=query_rewrite,
            rerank=rerank, context_window=context_window,
        )  # fmt: skip
        try:
            answer = await kb.aask(question, options)
        except CitewiseError as error:
            raise tool_error(str(error)) from None
        citations = [asdict(citation) for citation in answer.citations]
        return {"answer": answer.text, "kind": answer.kind, "citations": citations}

    return server


def serve(kb_name: str, settings: Settings) -> None:
    """Serve the tools for ``kb_name`` over stdio until the client closes the pipe.

    Raises:
        KnowledgeBaseError: no such knowledge base (now, with a clear message, rather than
            at the first tool call).
    """
    kb = Library.shared(settings).open(kb_name)
    build_server(kb).run("stdio")
