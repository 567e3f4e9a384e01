"""A Chainlit chat over a citewise knowledge base: streamed answers, statuses as steps,
citations as elements linking to the sections.

Run it with ``citewise chainlit --kb NAME`` (or ``chainlit run`` on this file with
``CITEWISE_CHAINLIT_KB=NAME``). The chat model is the one citewise's settings configure
(``CITEWISE_LLM_*``); without one the answers are extractive. ``CITEWISE_CHAINLIT_WORKFLOW``
picks ``citewise-agentic`` instead of ``citewise-rag``.

The chat settings are LGOS RAG's two: the docs scope (the knowledge base's scopes) and BM25
keyword search on or off (off: embeddings only). Each status ("Searching the docs: …") is a
``cl.Step`` of the answer; the answer streams
into one message; every cited section is a ``cl.Text`` element on that message whose text
starts with a Markdown link to the section, and the message ends with a numbered list of
the sections it cites, each a link.
"""

from __future__ import annotations

from typing import Any

from citewise.config import environment
from citewise.integrations import require
from citewise.kb import RAG, Done, KnowledgeBase, Library, Status, TextDelta
from citewise.models import Answer

cl: Any = require("chainlit", "chainlit", "chainlit", "The Chainlit app")

KB_ENV = "CITEWISE_CHAINLIT_KB"
WORKFLOW_ENV = "CITEWISE_CHAINLIT_WORKFLOW"
DEFAULT_KB = "docs"
AUTHOR = "citewise"
# Characters of a cited section's text shown in its element.
_EXCERPT_CHARS = 1200


def knowledge_base() -> KnowledgeBase:
    """The knowledge base this app answers from (``CITEWISE_CHAINLIT_KB``)."""
    return Library.shared().get(environment().get(KB_ENV, DEFAULT_KB))


def citation_elements(answer: Answer) -> list[Any]:
    """One ``cl.Text`` per cited section (first citation first), named ``[n] title``."""
    passages = {hit.url: hit.passage for hit in answer.hits}
    elements: list[Any] = []
    seen: dict[str, int] = {}
    for citation in answer.citations:
        if citation.url in seen:
            continue
        seen[citation.url] = len(seen) + 1
        excerpt = passages.get(citation.url, "")[:_EXCERPT_CHARS]
        elements.append(
            cl.Text(
                name=f"[{seen[citation.url]}] {citation.title}",
                content=f"[{citation.title}]({citation.url})\n\n{excerpt}",
                display="inline",
            )
        )
    return elements


def sources_list(answer: Answer) -> str:
    """The numbered Markdown list of the cited sections, each a link ("" for none)."""
    urls: dict[str, str] = {}
    for citation in answer.citations:
        urls.setdefault(citation.url, citation.title)
    lines = [f"{n}. [{title}]({url})" for n, (url, title) in enumerate(urls.items(), 1)]
    return "\n\n**Sources**\n\n" + "\n".join(lines) if lines else ""


def chat_settings(kb: KnowledgeBase) -> Any:
    """The chat settings widgets: docs scope and BM25, at the knowledge base's defaults."""
    defaults = kb.config.defaults
    scopes = list(kb.scopes)
    scope = defaults.scope if defaults.scope in scopes else scopes[0]
    widgets = cl.input_widget
    return cl.ChatSettings(
        [
            widgets.Select(id="scope", label="Docs scope", values=scopes, initial_value=scope),
            widgets.Switch(
                id="bm25", label="BM25 keyword search", initial=defaults.search_type != "vector"
            ),
        ]
    )


def search_overrides(kb: KnowledgeBase, chosen: dict[str, Any]) -> dict[str, Any]:
    """citewise search options for the chat settings (unset ones keep the defaults)."""
    overrides: dict[str, Any] = {}
    if isinstance(scope := chosen.get("scope"), str) and scope:
        overrides["scope"] = scope
    if chosen.get("bm25") is False:
        overrides["search_type"] = "vector"
    elif chosen.get("bm25") is True and kb.config.defaults.search_type == "vector":
        overrides["search_type"] = "hybrid"
    return overrides


async def answer_message(history: list[dict[str, str]], chosen: dict[str, Any]) -> Any:
    """Stream citewise's answer to the conversation into a Chainlit message; return it."""
    kb = knowledge_base()
    workflow = environment().get(WORKFLOW_ENV, RAG)
    reply = cl.Message(content="", author=AUTHOR)
    answer: Answer | None = None
    overrides = search_overrides(kb, chosen)
    async for event in kb.astream(history, overrides, workflow=workflow):
        if isinstance(event, Status):
            async with cl.Step(name=event.text, type="retrieval") as step:
                step.output = event.text
        elif isinstance(event, TextDelta) and event.text:
            await reply.stream_token(event.text)
        elif isinstance(event, Done):
            answer = event.answer
    if answer is not None:
        await reply.stream_token(sources_list(answer))
        reply.elements = citation_elements(answer)
    await reply.send()
    return reply


def _conversation(message: Any) -> list[dict[str, str]]:
    turns = [
        {"role": turn["role"], "content": str(turn["content"])}
        for turn in cl.chat_context.to_openai()
        if turn.get("role") in ("user", "assistant") and isinstance(turn.get("content"), str)
    ]
    if not turns or turns[-1]["role"] != "user":
        turns.append({"role": "user", "content": message.content})
    return turns


@cl.on_chat_start  # type: ignore[untyped-decorator, unused-ignore]
async def on_chat_start() -> None:
    await chat_settings(knowledge_base()).send()


@cl.on_message  # type: ignore[untyped-decorator, unused-ignore]
async def on_message(message: Any) -> None:
    chosen = dict(cl.context.session.chat_settings or {})
    await answer_message(_conversation(message), chosen)
