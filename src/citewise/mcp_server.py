"""``citewise mcp``: the docs as MCP tools over stdio: ``search_docs``, ``ask_docs``,
``get_section`` and ``list_scopes``.

Coding agents (Claude Code, Cursor, …) start ``citewise mcp --kb NAME`` as a subprocess and
call the tools; the official ``mcp`` package speaks the protocol (``pip install
'citewise[mcp]'``). The search tools take the search options of ``citewise.options`` (``None``
keeps the knowledge base's default) and call the knowledge base's own search and answer.
Each tool says which docs it searches (name, site, version from the index), is marked
read-only, and returns each part of its result once: ``search_docs`` its hits as structured
content with a short listing (titles and URLs) as text; ``ask_docs`` the answer as text and its
citations (spans of that text) as structured content; ``get_section`` the Markdown as text.
Arguments the input schema refuses come back as one line naming the argument.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, ValidationError

from citewise import __version__
from citewise.config import Settings
from citewise.errors import CitewiseError, MissingExtraError
from citewise.kb import KnowledgeBase, Library
from citewise.options import (
    DEFAULT_CANDIDATES_PER_RANKER,
    MAX_CANDIDATES_PER_RANKER,
    ContextScope,
    QueryRewrite,
    Rerank,
    SearchType,
    Verify,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


INSTRUCTIONS = (
    "Answers questions about {about}. search_docs returns the matching sections with their "
    "URLs; ask_docs returns an answer that cites them; get_section opens a cited section "
    "whole; list_scopes lists the parts of the docs a search can be limited to. Prefer "
    "citing the URLs."
)
TopK = Annotated[int | None, Field(ge=1, le=100, description="how many sections (1-100)")]
ContextWindow = Annotated[int | None, Field(ge=0, le=5)]
CandidatesPerRanker = Annotated[
    int | None,
    Field(
        ge=1,
        le=MAX_CANDIDATES_PER_RANKER,
        description="candidates each ranker brings to the fusion "
        f"(default {DEFAULT_CANDIDATES_PER_RANKER})",
    ),
]
ContextScopeArg = Annotated[
    ContextScope | None,
    Field(description="context window: the hit's section, or its page (adjacent sections)"),
]

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


def _argument_errors(tool: str, error: ValidationError) -> str:
    """Pydantic's report on a tool's arguments as one line (``tool: argument: problem``),
    without its model name, error codes and documentation URL."""
    problems = []
    for detail in error.errors(include_url=False, include_context=False):
        argument = ".".join(str(part) for part in detail["loc"]) or "arguments"
        problem = f"{argument}: {detail['msg']}"
        if "input" in detail and not isinstance(detail["input"], dict):
            problem += f" (got {detail['input']!r:.80})"
        problems.append(problem)
    return f"{tool}: {'; '.join(problems)}"


def _with_plain_argument_errors(server_class: Any, tool_error: type[Exception]) -> Any:
    """``server_class`` whose tool calls report refused arguments as :func:`_argument_errors`.

    The SDK validates the arguments before the tool runs and passes pydantic's multi-line
    message (with its "For further information visit …" URL) to the client; the pydantic
    error is the ``__cause__`` of its tool error, so it is rewritten there.
    """

    class Server(server_class):  # type: ignore[misc]
        async def call_tool(self, name: str, arguments: dict[str, Any], *args: Any) -> Any:
            try:
                return await super().call_tool(name, arguments, *args)
            except tool_error as error:
                if isinstance(error.__cause__, ValidationError):
                    raise tool_error(_argument_errors(name, error.__cause__)) from None
                raise

    return Server


def _overrides(**values: Any) -> dict[str, Any]:
    """The options a tool call set (``None``: the knowledge base's default)."""
    return {name: value for name, value in values.items() if value is not None}


def describe(kb: KnowledgeBase) -> str:
    """The docs ``kb`` holds, as a noun phrase: its name, description or site, and version."""
    meta = kb.meta()
    what = kb.config.description or meta.get("site_url") or meta.get("source") or "uploaded files"
    version = meta.get("release") or meta.get("version")
    return f"the {kb.name!r} documentation ({what}{f', version {version}' if version else ''})"


def _scopes_sentence(kb: KnowledgeBase) -> str:
    """The scopes a search can be limited to, as a sentence (empty when there is only ``all``)."""
    scopes = [scope for scope in kb.scopes if scope != "all"]
    return f" scope limits it to one part of the docs: {', '.join(scopes)}." if scopes else ""


def _result(structured: dict[str, Any], summary: str) -> Any:
    """One copy of a tool's result: the structured content, and a summary (no section
    text) as the text content that clients without structured output read."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(type="text", text=summary)], structured_content=structured
    )


def _listing(results: list[dict[str, Any]]) -> str:
    lines = [f"{n}. {' › '.join(r['heading_path']) or r['title']}: {r['url']}"
             for n, r in enumerate(results, start=1)]  # fmt: skip
    return "\n".join(lines) or "No section matches."


def build_server(kb: KnowledgeBase) -> MCPServer[Any]:
    """An MCP server whose tools search and answer from ``kb`` (its chat model, if any,
    writes the answers; without one they are extractive)."""
    from mcp.types import ToolAnnotations

    server_class, tool_error = _mcp_classes()
    about = describe(kb)
    scopes_sentence = _scopes_sentence(kb)
    server: MCPServer[Any] = _with_plain_argument_errors(server_class, tool_error)(
        name="citewise", version=__version__, instructions=INSTRUCTIONS.format(about=about)
    )
    # The scopes as an enum, so a client offers them and never sends one that is not there.
    scope_type: Any = Annotated[
        Literal[tuple(kb.scopes)] | None,
        Field(description="`all`, or one part of the docs (list_scopes describes them)"),
    ]
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    async def search_docs(
        query: str,
        scope: str | None = None,
        top_k: TopK = None,
        search_type: SearchType | None = None,
        query_rewrite: QueryRewrite | None = None,
        rerank: Rerank | None = None,
        context_window: ContextWindow = None,
        collapse_sections: bool | None = None,
        doc_ids: list[str] | None = None,
        page_prefix: str | None = None,
        candidates_per_ranker: CandidatesPerRanker = None,
        context_scope: ContextScopeArg = None,
        doc_metadata: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        options = _overrides(
            scope=scope, top_k=top_k, search_type=search_type, query_rewrite=query_rewrite,
            rerank=rerank, context_window=context_window, collapse_sections=collapse_sections,
            doc_ids=doc_ids, page_prefix=page_prefix,
            candidates_per_ranker=candidates_per_ranker, context_scope=context_scope,
            doc_metadata=doc_metadata,
        )  # fmt: skip
        try:
            hits = await kb.asearch(query, options)
        except CitewiseError as error:
            raise tool_error(str(error)) from None
        results = [hit.as_json() for hit in hits]
        structured = {"results": results, "scopes": list(kb.scopes)}
        return _result(structured, _listing(results))  # type: ignore[no-any-return]

    async def ask_docs(
        question: str,
        scope: str | None = None,
        top_k: TopK = None,
        search_type: SearchType | None = None,
        query_rewrite: QueryRewrite | None = None,
        rerank: Rerank | None = None,
        context_window: ContextWindow = None,
        collapse_sections: bool | None = None,
        verify: Verify | None = None,
        candidates_per_ranker: CandidatesPerRanker = None,
        context_scope: ContextScopeArg = None,
    ) -> dict[str, Any]:
        options = _overrides(
            scope=scope, top_k=top_k, search_type=search_type, query_rewrite=query_rewrite,
            rerank=rerank, context_window=context_window, collapse_sections=collapse_sections,
            verify=verify, candidates_per_ranker=candidates_per_ranker,
            context_scope=context_scope,
        )  # fmt: skip
        try:
            answer = await kb.aask(question, options)
        except CitewiseError as error:
            raise tool_error(str(error)) from None
        citations = [asdict(citation) for citation in answer.citations]
        structured: dict[str, object] = {
            "kind": answer.kind,
            "citations": citations,
        }
        if answer.verification is not None:
            structured["verification"] = answer.verification.as_json()
        return _result(structured, answer.text)  # type: ignore[no-any-return]

    async def get_section(url: str) -> str:
        import asyncio

        text = await asyncio.to_thread(partial(kb.section, readable=True), url)
        if text is None:
            raise tool_error(f"no section at {url!r} in {kb.name!r}: pass a URL search_docs "
                             "or ask_docs returned")  # fmt: skip
        return text  # without the site's build markup: `# (1)!` means nothing to an agent

    async def list_scopes() -> dict[str, Any]:
        scopes = list(kb.scopes)
        return _result({"scopes": scopes}, ", ".join(scopes))  # type: ignore[no-any-return]

    search_docs.__annotations__["scope"] = scope_type
    ask_docs.__annotations__["scope"] = scope_type
    descriptions: dict[Callable[..., Any], str] = {
        search_docs: (
            f"Search {about}: the best-matching sections, each with its URL (link to it when "
            f"you use it), heading path, score and text.{scopes_sentence} Options left out "
            "keep the knowledge base's defaults. query: what to look for, in words the docs "
            "would use; "
            "search_type: hybrid (meaning and keywords), vector or full_text; query_rewrite: "
            "off, hyde, multi_query or step_back (needs a chat model); rerank: off, "
            "cross_encoder or llm; context_window: neighbouring chunks added to each hit (0-5), "
            "context_scope: from its section (default) or its page; candidates_per_ranker: "
            "candidates each ranker brings to the fusion (default 20); collapse_sections: "
            "each section once (default true); "
            "doc_ids: only these documents; page_prefix: only pages "
            "whose path starts with this; doc_metadata: only documents whose metadata has "
            'these values, e.g. {"author": "Ada"}.'
        ),
        ask_docs: (
            f"Answer a question from {about}. The answer comes as text; the structured "
            "content lists the sections it cites (each citation a span of the answer text, "
            "start_index/end_index in code points, with the section's URL; attributed: "
            "citewise added it) and, under verification, the names and links the sections "
            "do not hold. verify: off, report, warn (a warning in the answer) or regenerate."
            f"{scopes_sentence} Search options work as in search_docs."
        ),
        get_section: (
            f"Open a section of {about} whole, as Markdown, by the URL that search_docs or "
            "ask_docs cited; a page URL without an #anchor opens the whole page."
        ),
        list_scopes: (
            f"List the scopes of {about}: the parts of the docs that the scope option of "
            "search_docs and ask_docs limits a search to."
        ),
    }
    titles = {
        search_docs: "Search the docs",
        ask_docs: "Ask the docs",
        get_section: "Open a cited section",
        list_scopes: "List the docs' scopes",
    }
    for tool, description in descriptions.items():
        server.tool(
            title=titles[tool],
            description=description,
            annotations=read_only,
            structured_output=False if tool is get_section else None,  # Markdown once, as text
        )(tool)
    return server


def serve(kb_name: str, settings: Settings) -> None:
    """Serve the tools for ``kb_name`` over stdio until the client closes the pipe.

    Raises:
        KnowledgeBaseError: no such knowledge base (now, with a clear message, rather than
            at the first tool call).
    """
    kb = Library.shared(settings).open(kb_name)
    build_server(kb).run("stdio")
