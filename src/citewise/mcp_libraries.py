"""MCP tools over every knowledge base of a library, for coding agents: ``resolve_library``,
``list_libraries``, ``search_docs`` (within a token budget), ``get_section`` and ``ask_docs``.

Served over stdio (``citewise mcp --all``) and over streamable HTTP at ``/mcp`` of
``citewise serve`` (:mod:`citewise.server.mcp_http`). A library is a knowledge base, named by
its catalog card (:mod:`citewise.kb.catalog`): package, version, description, scopes. A
search that names no library is routed as a question to the server is
(:mod:`citewise.kb.routing`). An unknown library is an error naming the known ones with
their versions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from citewise import __version__
from citewise.config import Settings
from citewise.errors import CitewiseError
from citewise.kb.catalog import Card, normalized
from citewise.mcp_server import (
    _listing,
    _mcp_classes,
    _overrides,
    _result,
    _with_plain_argument_errors,
)
from citewise.models import Hit
from citewise.options import SearchType

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from citewise.kb.multi import KnowledgeBases

__all__ = ["DEFAULT_TOKENS", "build_library_server", "serve_all", "within_budget"]

DEFAULT_TOKENS = 5000
INSTRUCTIONS = (
    "Answers questions about the documentation of these libraries, each at the version "
    "indexed: {libraries}. Call resolve_library with a package name (and the version you "
    "use) to get its knowledge base, then search_docs with it and a token budget; get_section "
    "opens a cited section whole; ask_docs answers with citations. Cite the URLs."
)
Libraries = Annotated[
    list[str] | None,
    Field(description="knowledge bases (from resolve_library or list_libraries); none: routed"),
]
Tokens = Annotated[int, Field(ge=50, le=100_000, description="most tokens of text to return")]
TopK = Annotated[int | None, Field(ge=1, le=100, description="sections per library (1-100)")]


def _counter(kbs: KnowledgeBases) -> tuple[Any, str]:
    """A function counting (and cutting) text in the embedder's tokens, and its name."""
    name = kbs.settings.embedder
    embedder = kbs.library.embedder(name, cached=False)
    spans = getattr(embedder, "token_spans", None)
    if spans is None:  # an embedder without a tokenizer of its own: words
        return (lambda text: [(m, m) for m in range(len(text.split()))]), "words"
    return spans, f"{name} tokenizer"


def within_budget(
    hits: list[Hit], budget: int, spans: Any
) -> tuple[list[dict[str, object]], int, bool]:
    """The hits as JSON while their text (heading path, URL, section text) fits ``budget``
    tokens: the tokens used, and whether a hit was cut or left out. The first hit is cut
    to the budget rather than dropped."""
    results: list[dict[str, object]] = []
    used, cut = 0, False
    for hit in hits:
        result = hit.as_json()
        head = f"{' › '.join(hit.chunk.heading_path)}\n{hit.url}\n"
        cost = len(spans(head)) + len(spans(str(result["text"])))
        if used + cost > budget:
            room = budget - used - len(spans(head))
            if results or room <= 0:
                cut = True
                break
            text = str(result["text"])
            result["text"] = text[: spans(text)[room - 1][1]]
            cost = len(spans(head)) + room
            cut = True
        results.append(result)
        used += cost
    return results, used, cut


def _known(cards: list[Card]) -> str:
    return ", ".join(f"{card.name} ({card.label})" for card in cards) or "none yet"


def build_library_server(kbs: KnowledgeBases) -> MCPServer[Any]:
    """An MCP server whose tools resolve, list, search and answer from the libraries of
    ``kbs`` (a chat model, if configured, writes ``ask_docs`` answers)."""
    import asyncio

    from mcp.types import ToolAnnotations

    server_class, tool_error = _mcp_classes()
    cards = kbs.cards()
    server: MCPServer[Any] = _with_plain_argument_errors(server_class, tool_error)(
        name="citewise", version=__version__,
        instructions=INSTRUCTIONS.format(libraries=_known(cards)),
    )  # fmt: skip
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    async def current() -> list[Card]:
        return await asyncio.to_thread(kbs.cards)

    async def checked(libraries: list[str] | None) -> list[str] | None:
        if not libraries:
            return None
        known = await current()
        names = {card.name for card in known}
        unknown = [name for name in libraries if name not in names]
        if unknown:
            raise tool_error(f"unknown library {unknown[0]!r}: known are {_known(known)}")
        return libraries

    async def resolve_library(name: str, version: str | None = None) -> dict[str, Any]:
        known = await current()
        # ``python-requests``, ``py-widgets``: the names distributions and distros give it too.
        wanted = {normalized(name)} | {normalized(name).removeprefix(p) for p in ("python-", "py-")}
        found = [c for c in known if wanted & {normalized(a) for a in (*c.aliases, c.name)}]
        if version:
            found = [card for card in found if card.version == version]
        if not found:
            at = f" {version}" if version else ""
            raise tool_error(f"no library {name!r}{at}: known are {_known(known)}")
        best = found[0]
        summary = f"{best.name}: {best.label} — {best.description}"
        return _result({**best.as_json(), "matches": [c.name for c in found]}, summary)  # type: ignore[no-any-return]

    async def list_libraries() -> dict[str, Any]:
        known = await current()
        lines = "\n".join(f"{card.name}: {card.label}" for card in known)
        return _result({"libraries": [card.as_json() for card in known]}, lines)  # type: ignore[no-any-return]

    async def search_docs(
        query: str,
        libraries: Libraries = None,
        tokens: Tokens = DEFAULT_TOKENS,
        top_k: TopK = None,
        search_type: SearchType | None = None,
    ) -> dict[str, Any]:
        names = await checked(libraries)
        options = _overrides(top_k=top_k, search_type=search_type)
        try:
            hits = await kbs.asearch(query, options, libraries=names)
            spans, tokenizer = await asyncio.to_thread(_counter, kbs)
            results, used, cut = await asyncio.to_thread(within_budget, hits, tokens, spans)
        except CitewiseError as error:
            raise tool_error(str(error)) from None
        structured = {"results": results, "tokens": used, "token_budget": tokens,
                      "tokenizer": tokenizer, "truncated": cut}  # fmt: skip
        return _result(structured, _listing(results) + f"\n({used} of {tokens} tokens)")  # type: ignore[no-any-return]

    async def get_section(url: str, library: str | None = None) -> str:
        names = await checked([library] if library else None)
        source = kbs if names is None else kbs.library.open(names[0])
        text = await asyncio.to_thread(lambda: source.section(url, readable=True))
        if text is None:
            raise tool_error(f"no section at {url!r}: pass a URL search_docs or ask_docs returned")
        return text

    async def ask_docs(question: str, libraries: Libraries = None) -> dict[str, Any]:
        names = await checked(libraries)
        try:
            answer = await kbs.aask(question, libraries=names)
        except CitewiseError as error:
            raise tool_error(str(error)) from None
        citations = [asdict(citation) for citation in answer.citations]
        return _result({"kind": answer.kind, "citations": citations}, answer.text)  # type: ignore[no-any-return]

    descriptions: dict[Callable[..., Any], str] = {
        resolve_library: "Find the knowledge base of a library by its package name, in any "
        "spelling (requests, langgraph_openai_serve), and optionally the version you use. "
        "Returns its knowledge base name (pass it as libraries to search_docs), version, "
        "description and scopes; an unknown name lists the libraries there are.",
        list_libraries: "List every library this server has docs for: knowledge base name, "
        "package, version, description, scopes.",
        search_docs: "Search the docs of one or several libraries (libraries: knowledge base "
        "names; none: the libraries the query names, else the nearest). Returns the best "
        "sections, each with its library, version, URL, heading path and text, at most "
        "`tokens` tokens of text in all (counted with the embedder's tokenizer; the result "
        "says how many it used). top_k: sections per library; search_type: hybrid, vector "
        "or full_text.",
        get_section: "Open a section whole, as Markdown, by the URL search_docs or ask_docs "
        "cited (library: its knowledge base, if known).",
        ask_docs: "Answer a question from the docs of the libraries it names (or libraries), "
        "citing the sections used; the structured content lists the citations.",
    }
    titles = {resolve_library: "Resolve a library", list_libraries: "List the libraries",
              search_docs: "Search the docs", get_section: "Open a cited section",
              ask_docs: "Ask the docs"}  # fmt: skip
    for tool, description in descriptions.items():
        server.tool(
            title=titles[tool], description=description, annotations=read_only,
            structured_output=False if tool is get_section else None,
        )(tool)  # fmt: skip
    return server


def serve_all(settings: Settings) -> None:
    """Serve the library tools for every knowledge base of ``settings``' store over stdio."""
    from citewise.kb import Library
    from citewise.kb.multi import KnowledgeBases

    build_library_server(KnowledgeBases(Library.shared(settings))).run("stdio")
