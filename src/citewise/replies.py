"""The structured replies citewise asks a chat model for (pydantic models), imported where a
model is called: a search without a chat model never loads pydantic (benchmarks/cold-cli.md).

Each is built when first used (``defer_build``), and its class name is the run name a call
is recorded and scripted under (``citewise.testing``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ChunkQuestions",
    "HypotheticalPassage",
    "QueryVariants",
    "Ranking",
    "StepBackQuestion",
]

_DEFERRED = ConfigDict(defer_build=True)


class ChunkQuestions(BaseModel):
    """Questions a passage answers (the qa index strategy embeds them)."""

    model_config = _DEFERRED

    questions: list[str] = Field(default_factory=list)


class Ranking(BaseModel):
    """The listwise reranker's reply: passage numbers, most relevant first."""

    model_config = _DEFERRED

    order: list[int] = Field(default_factory=list)


class HypotheticalPassage(BaseModel):
    """HyDE: a passage that would answer the question (its words, not its facts, matter)."""

    model_config = _DEFERRED

    passage: str


class QueryVariants(BaseModel):
    """Multi-query: other phrasings of the question."""

    model_config = _DEFERRED

    queries: list[str] = Field(default_factory=list)


class StepBackQuestion(BaseModel):
    """Step-back: the more general question behind the question."""

    model_config = _DEFERRED

    question: str
