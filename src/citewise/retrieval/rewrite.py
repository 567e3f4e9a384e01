"""Query rewriting by a chat model: HyDE, multi-query and step-back phrasings of a question."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from citewise.llm import astructured, at_temperature_zero

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

REWRITES = ("off", "hyde", "multi_query", "step_back")
MAX_VARIANTS = 3


class HypotheticalPassage(BaseModel):
    """HyDE: a passage that would answer the question (its words, not its facts, matter)."""

    passage: str


class QueryVariants(BaseModel):
    """Multi-query: other phrasings of the question."""

    queries: list[str] = Field(default_factory=list)


class StepBackQuestion(BaseModel):
    """Step-back: the more general question behind the question."""

    question: str


_SYSTEM = (
    "You help a search engine over a documentation knowledge base. Write in the language of "
    "the user's question. Reply with the requested JSON only."
)
_ASK: dict[str, tuple[type[BaseModel], str]] = {
    "hyde": (
        HypotheticalPassage,
        "Write a short passage (2-4 sentences), in the style of technical documentation, that "
        "answers this question. It is used only to find similar passages, so plausible "
        "wording matters more than exact facts.",
    ),
    "multi_query": (
        QueryVariants,
        f"Write up to {MAX_VARIANTS} different search queries for this question: rephrase "
        "it, use synonyms, and split a question about several things into one query each.",
    ),
    "step_back": (
        StepBackQuestion,
        "Write the more general, step-back question whose answer gives the background "
        "needed for this question (for a question about one setting, ask about the feature).",
    ),
}


async def rewrite_query(query: str, how: str, model: BaseChatModel | None) -> list[str]:
    """The phrasings to search for ``query``: the query itself first, then the rewrites.

    Searching the original too means a poor rewrite can add candidates but never lose the
    ones the question finds by itself; the caller fuses the lists by RRF.

    Raises:
        ConfigurationError: ``how`` is unknown, or a rewrite is asked for with no model.
        ModelError: the model's reply was unusable.
    """
    from langchain_core.messages import HumanMessage, SystemMessage

    from citewise.errors import ConfigurationError

    if how not in REWRITES:
        raise ConfigurationError(f"unknown query_rewrite {how!r} (known: {', '.join(REWRITES)})")
    if how == "off":
        return [query]
    if model is None:
        raise ConfigurationError(
            f"query_rewrite={how} needs a chat model: set CITEWISE_LLM_MODEL "
            "(and CITEWISE_LLM_BASE_URL) or chat_model, or use query_rewrite=off"
        )
    schema, instruction = _ASK[how]
    messages = [SystemMessage(_SYSTEM), HumanMessage(f"{instruction}\n\nQuestion: {query}")]
    reply: BaseModel = await astructured(
        at_temperature_zero(model), schema, messages, tags=["rewrite"]
    )
    if isinstance(reply, HypotheticalPassage):
        extra = [reply.passage]
    elif isinstance(reply, QueryVariants):
        extra = reply.queries
    else:
        assert isinstance(reply, StepBackQuestion)
        extra = [reply.question]
    # De-duplicated before the cap, so a repeated variant does not cost a distinct one.
    return list(dict.fromkeys([query, *(q.strip() for q in extra if q.strip())]))[
        : 1 + MAX_VARIANTS
    ]
