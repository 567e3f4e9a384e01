"""citewise's workflows served by langgraph-openai-serve (LGOS) on /v1/chat/completions and
/v1/responses, with LGOS's client settings (docs scope, BM25 on/off) and url_citations.

LGOS serves LangGraph graphs as OpenAI models. Each graph here has one node, ``citewise``,
that runs a citewise workflow (``citewise-rag`` or ``citewise-agentic``) on a knowledge base
through the service layer, so answers are exactly what ``citewise serve`` gives:

- the client settings (``GET /v1/models/{model}``, sent back in ``metadata.lgos_settings``)
  are ``scope`` (one of the knowledge base's scopes) and ``bm25`` (keyword ranking on or
  off), mapped onto citewise's search options;
- statuses ("Searching the docs: …") become LGOS status events (Responses commentary);
- the answer text streams as the node's message tokens, exactly the text citewise writes
  (its own model calls stay off LGOS's token stream);
- citations become LangChain ``citation`` annotations on the final message, which LGOS
  turns into ``url_citation`` annotations (LGOS's spans are inclusive: ``end_index`` is the
  last character of the link, one less than citewise's own server reports).

A served app (``uvicorn citewise.integrations.lgos:app``, knowledge base from
``CITEWISE_LGOS_KB``, default ``lgos``) or, in code::

    from citewise.integrations import lgos
    app = lgos.create_app(kb="lgos")          # a FastAPI app with the OpenAI routes
    config = lgos.graph_config(kb="lgos")     # one GraphConfig, to register yourself
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, AnyMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.config import get_stream_writer
from langgraph.graph import StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from pydantic import ConfigDict, Field, create_model
from typing_extensions import TypedDict

from citewise.config import environment
from citewise.errors import MissingExtraError
from citewise.kb import AGENTIC, RAG, Done, KnowledgeBase, Library, Status, TextDelta
from citewise.models import Answer

if TYPE_CHECKING:
    from fastapi import FastAPI

try:
    from langgraph_openai_serve import (
        ClientSettings,
        GraphConfig,
        GraphRegistry,
        LanggraphOpenaiServe,
        status_event,
    )
except ImportError as missing:
    raise MissingExtraError("langgraph-openai-serve", "lgos", "The LGOS graphs") from missing

NODE = "citewise"
DEFAULT_KB = "lgos"
KB_ENV = "CITEWISE_LGOS_KB"
# LangChain's tag for model runs whose tokens must not reach a token stream.
_NOSTREAM = "nostream"
_DESCRIPTIONS = {
    RAG: "Answers from the {kb} docs with cited sections (plan, search, answer, check).",
    AGENTIC: "Answers from the {kb} docs, grading the sections found and rewriting the search "
    "once when they miss (cited).",
}


class GraphState(TypedDict):
    """The conversation LGOS passes in; the node appends the cited answer."""

    messages: Annotated[list[AnyMessage], add_messages]


@dataclass(frozen=True)
class RunContext:
    """One request's run: the workflow and the search options its client settings chose."""

    workflow: str
    overrides: Mapping[str, Any]


def settings_model(kb: KnowledgeBase) -> type[ClientSettings]:
    """The LGOS ``ClientSettings`` of a knowledge base: its scopes and BM25 on or off.

    Defaults are the knowledge base's own (its default scope, keyword ranking unless it
    searches by vectors only), so a client that changes nothing gets citewise's answer. LGOS
    validates the contract when the graph is registered, so scopes added later need a restart.
    """
    scopes = kb.scopes
    defaults = kb.config.defaults
    default_scope = defaults.scope if defaults.scope in scopes else scopes[0]
    scope_type: Any = Literal.__getitem__(scopes)  # the closed list a client UI shows
    model: type[ClientSettings] = create_model(
        "CitewiseSettings",
        __base__=ClientSettings,
        scope=(
            scope_type,
            Field(
                default=default_scope,
                title="Docs scope",
                description="The part of the docs to search (all: everything).",
            ),
        ),
        bm25=(
            bool,
            Field(
                default=defaults.search_type != "vector",
                title="BM25 keyword search",
                description="Rank sections by keywords (BM25) beside embeddings; off: "
                "embeddings only.",
            ),
        ),
    )
    return model


def search_overrides(kb: KnowledgeBase, settings: Any) -> dict[str, Any]:
    """citewise search options for a request's client settings (``scope``, ``bm25``)."""
    default_type: str = kb.config.defaults.search_type
    search_type = "vector"
    if settings.bm25:
        search_type = default_type if default_type != "vector" else "hybrid"
    return {"scope": settings.scope, "search_type": search_type}


def graph_config(
    kb: str | KnowledgeBase = DEFAULT_KB,
    *,
    workflow: str = RAG,
    library: Library | None = None,
) -> GraphConfig:
    """The LGOS ``GraphConfig`` that serves ``workflow`` over the knowledge base ``kb``.

    ``kb`` is a name (opened in ``library``, default the process-wide one) or a
    :class:`~citewise.kb.KnowledgeBase` (its chat model answers; none: the extractive
    answer). The knowledge base must exist: its scopes make the client settings.
    """
    if workflow not in _DESCRIPTIONS:
        raise ValueError(f"unknown workflow {workflow!r} (known: {', '.join(_DESCRIPTIONS)})")
    base = kb if isinstance(kb, KnowledgeBase) else (library or Library.shared()).get(kb)
    base.require()
    settings = settings_model(base)

    def context_factory(_request: Any, chosen: Any) -> RunContext:
        return RunContext(workflow, search_overrides(base, chosen))

    return GraphConfig(
        graph=answer_graph(base),
        description=_DESCRIPTIONS[workflow].format(kb=base.name),
        client_settings=settings,
        context_factory=context_factory,
    )


def graph_registry(
    kb: str | KnowledgeBase = DEFAULT_KB, *, library: Library | None = None
) -> GraphRegistry:
    """Both workflows as LGOS models: ``citewise-rag`` and ``citewise-agentic``."""
    return GraphRegistry(
        graphs={name: graph_config(kb, workflow=name, library=library) for name in _DESCRIPTIONS}
    )


def create_app(kb: str | KnowledgeBase = DEFAULT_KB, *, library: Library | None = None) -> FastAPI:
    """A FastAPI app serving both workflows on LGOS's OpenAI routes (``/v1/...``)."""
    serve = LanggraphOpenaiServe(registry=graph_registry(kb, library=library))
    serve.bind_openai_api()
    app: FastAPI = serve.app
    return app


def answer_graph(kb: KnowledgeBase) -> Any:
    """The compiled one-node graph LGOS runs: conversation in, cited answer out."""

    async def citewise(state: GraphState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        run = runtime.context
        answer = await _relay_answer(kb, state["messages"], run, get_stream_writer())
        return {"messages": [cited_message(answer)]}

    graph = StateGraph(GraphState, context_schema=RunContext)
    graph.add_node(NODE, citewise)
    graph.set_entry_point(NODE)
    graph.set_finish_point(NODE)
    return graph.compile(name="citewise")


def cited_message(answer: Answer) -> AIMessage:
    """The answer as LGOS's final message: one text block with LangChain citations."""
    text = answer.text
    annotations: list[dict[str, Any]] = [
        {
            "type": "citation",
            "url": citation.url,
            "title": citation.title,
            "start_index": citation.start_index,
            # LGOS's spans are inclusive; citewise's end is one past the link.
            "end_index": citation.end_index - 1,
            "cited_text": text[citation.start_index : citation.end_index],
        }
        for citation in answer.citations
        if 0 <= citation.start_index < citation.end_index <= len(text)
    ]
    return AIMessage(content=[{"type": "text", "text": text, "annotations": annotations}])


async def _relay_answer(
    kb: KnowledgeBase,
    messages: list[AnyMessage],
    run: RunContext,
    write: Callable[[Any], None],
) -> Answer:
    """Run citewise's workflow; its text streams as this node's model tokens, its statuses
    as LGOS status events, and the finished answer is returned."""
    pieces: asyncio.Queue[str | None] = asyncio.Queue()
    finished: list[Answer] = []

    async def produce() -> None:
        try:
            async for event in kb.astream(messages, run.overrides, workflow=run.workflow):
                if isinstance(event, Status):
                    write(status_event(event.text))
                elif isinstance(event, TextDelta) and event.text:
                    pieces.put_nowait(event.text)
                elif isinstance(event, Done):
                    finished.append(event.answer)
        finally:
            pieces.put_nowait(None)

    # citewise's own model calls run as children of this node (traces and usage see them)
    # but tagged nostream: only the relay's tokens, citewise's final text, reach LGOS.
    context = contextvars.copy_context()
    parent = context.get(var_child_runnable_config) or {}
    tags = [*(parent.get("tags") or []), _NOSTREAM]
    context.run(var_child_runnable_config.set, {**parent, "tags": tags})
    task = asyncio.get_running_loop().create_task(produce(), context=context)
    try:
        await _Relay(pieces=pieces).ainvoke(messages)
        await task
    finally:
        if not task.done():
            task.cancel()
    if not finished:  # pragma: no cover - the workflow always ends with Done
        raise RuntimeError("the citewise workflow ended without an answer")
    return finished[0]


class _Relay(BaseChatModel):
    """A chat model whose tokens are the text a citewise run writes, in order.

    LGOS streams the tokens of the graph's chat model runs; relaying citewise's text this
    way keeps its streamed text identical to the final answer (warnings included, a held
    back first answer excluded), which LGOS checks.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    pieces: Any  # asyncio.Queue[str | None]: None ends the text

    @property
    def _llm_type(self) -> str:
        return "citewise-relay"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        raise NotImplementedError("the relay runs on an event loop only")

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        while (piece := await self.pieces.get()) is not None:
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                await run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = "".join([chunk.text async for chunk in self._astream(messages, stop)])
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def _app_from_environment() -> FastAPI:
    return create_app(environment().get(KB_ENV, DEFAULT_KB))


def __getattr__(name: str) -> Any:
    # ``uvicorn citewise.integrations.lgos:app``: built on first access, so importing the
    # module (for graph_config) opens no knowledge base.
    if name == "app":
        return _app_from_environment()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
