"""Query rewriting: HyDE, multi-query and step-back phrasings by a chat model, or a package's.

A query rewrite is an async function ``rewrite(query, model) -> list[str]`` returning the
extra phrasings to search (the query itself is always searched too); ``model`` is the chat
model, None when none is configured. Built-ins and packages register in
:data:`QUERY_REWRITES` (entry-point group ``citewise.query_rewrites``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from citewise.errors import ConfigurationError
from citewise.llm import SchemaT, astructured, at_temperature_zero
from citewise.registry import Registry

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

MAX_VARIANTS = 3

QueryRewriter = Callable[[str, "BaseChatModel | None"], Awaitable[list[str]]]
"""Registered as: ``rewrite(query, model)`` → the extra phrasings of ``query``."""

QUERY_REWRITES: Registry[QueryRewriter] = Registry(
    "query_rewrite",
    {
        "hyde": "citewise.retrieval.rewrite:hyde",
        "multi_query": "citewise.retrieval.rewrite:multi_query",
        "step_back": "citewise.retrieval.rewrite:step_back",
    },
    reserved=("off",),
)


_SYSTEM = (
    "You help a search engine over a documentation knowledge base. Write in the language of "
    "the user's question. Reply with the requested JSON only."
)
# What each built-in rewrite asks the chat model (its reply's type is imported where it
# is called: a search without a rewrite never loads pydantic).
_ASK: dict[str, str] = {
    "hyde": (
        "Write a short passage (2-4 sentences), in the style of technical documentation, that "
        "answers this question. It is used only to find similar passages, so plausible "
        "wording matters more than exact facts."
    ),
    "multi_query": (
        f"Write up to {MAX_VARIANTS} different search queries for this question: rephrase "
        "it, use synonyms, and split a question about several things into one query each."
    ),
    "step_back": (
        "Write the more general, step-back question whose answer gives the background "
        "needed for this question (for a question about one setting, ask about the feature)."
    ),
}


async def rewrite_query(query: str, how: str, model: BaseChatModel | None) -> list[str]:
    """The phrasings to search for ``query``: the query itself first, then the rewrites.

    Searching the original too means a poor rewrite can add candidates but never lose the
    ones the question finds by itself; the caller fuses the lists by RRF.

    Raises:
        ConfigurationError: ``how`` is unknown (naming the known ones), or a built-in
            rewrite is asked for with no model.
        ModelError: the model's reply was unusable.
    """
    if QUERY_REWRITES.check(how) == "off":
        return [query]
    extra = await QUERY_REWRITES.get(how)(query, model)
    # De-duplicated before the cap, so a repeated variant does not cost a distinct one.
    return list(dict.fromkeys([query, *(q.strip() for q in extra if q.strip())]))[
        : 1 + MAX_VARIANTS
    ]


async def hyde(query: str, model: BaseChatModel | None) -> list[str]:
    """``hyde``: a passage the chat model writes as the answer."""
    from citewise.replies import HypotheticalPassage

    reply = await _ask("hyde", HypotheticalPassage, query, model)
    return [reply.passage]


async def multi_query(query: str, model: BaseChatModel | None) -> list[str]:
    """``multi_query``: up to ``MAX_VARIANTS`` rephrasings by the chat model."""
    from citewise.replies import QueryVariants

    reply = await _ask("multi_query", QueryVariants, query, model)
    return reply.queries


async def step_back(query: str, model: BaseChatModel | None) -> list[str]:
    """``step_back``: the more general question behind the question."""
    from citewise.replies import StepBackQuestion

    reply = await _ask("step_back", StepBackQuestion, query, model)
    return [reply.question]


async def _ask(how: str, schema: type[SchemaT], query: str, model: BaseChatModel | None) -> SchemaT:
    from langchain_core.messages import HumanMessage, SystemMessage

    if model is None:
        raise ConfigurationError(
            f"query_rewrite={how} needs a chat model: set CITEWISE_LLM_MODEL "
            "(and CITEWISE_LLM_BASE_URL) or chat_model, or use query_rewrite=off"
        )
    messages = [SystemMessage(_SYSTEM), HumanMessage(f"{_ASK[how]}\n\nQuestion: {query}")]
    return await astructured(at_temperature_zero(model), schema, messages, tags=["rewrite"])
