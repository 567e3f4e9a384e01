"""The service layer: every use-case of knowledge bases, for every door (CLI, server, MCP,
Python, evaluation and bench).

- :class:`Library`: where knowledge bases live (the store ``CITEWISE_STORE_URL`` names) and
  what they share (embedders, chat models), each knowledge base opened once per process.
- :class:`KnowledgeBase`: ingest (one pipeline for a folder, uploads, a release, parsed
  sections), search (one pipeline: the knowledge base's defaults overridden per request →
  rewrite → hybrid → rerank → context window) and answers (the chat model is picked in
  :mod:`citewise.kb.models` only).
- :mod:`citewise.kb.releases`: fetch a release's docs, then ingest them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citewise.answering import (
    AGENTIC,
    AGENTIC_TOOLS,
    DEFAULT_WORKFLOW,
    RAG,
    WORKFLOWS,
    workflow_description,
)
from citewise.chunking import OVERLAP_UNITS
from citewise.graph.events import Done, Event, Status, TextDelta
from citewise.kb.config import KBConfig
from citewise.kb.knowledge_base import KnowledgeBase, OnSearch
from citewise.kb.library import Library
from citewise.kb.models import CHAT_MODELS, make_chat_model, model_configured
from citewise.kb.request import Resolved
from citewise.options import ALL_SCOPE, OPTION_NAMES, OptionsError, SearchOptions, parse_options
from citewise.retrieval.rerank import RERANKERS
from citewise.retrieval.rewrite import QUERY_REWRITES
from citewise.strategies import (
    DEFAULT_CHILD_CHARS,
    DEFAULT_QUESTIONS,
    STRATEGIES,
    IndexStrategy,
)

if TYPE_CHECKING:
    from citewise.kb.ingest import IndexReport, Progress, parse_folder, source_from_bytes

__all__ = [
    "AGENTIC",
    "AGENTIC_TOOLS",
    "ALL_SCOPE",
    "OPTION_NAMES",
    "CHAT_MODELS",
    "DEFAULT_CHILD_CHARS",
    "DEFAULT_QUESTIONS",
    "DEFAULT_WORKFLOW",
    "OVERLAP_UNITS",
    "QUERY_REWRITES",
    "RAG",
    "RERANKERS",
    "STRATEGIES",
    "WORKFLOWS",
    "Done",
    "Event",
    "IndexReport",
    "IndexStrategy",
    "KBConfig",
    "KnowledgeBase",
    "Library",
    "OnSearch",
    "Progress",
    "Resolved",
    "OptionsError",
    "SearchOptions",
    "Status",
    "TextDelta",
    "make_chat_model",
    "model_configured",
    "parse_folder",
    "parse_options",
    "source_from_bytes",
    "workflow_description",
]

# The ingest pipeline (parsers, sources, chunking) loads when first used: a search or an
# answer never needs it, and the command line starts faster without it.
_INGEST_NAMES = frozenset({"IndexReport", "Progress", "parse_folder", "source_from_bytes"})


def __getattr__(name: str) -> object:
    if name in _INGEST_NAMES:
        from citewise.kb import ingest

        return getattr(ingest, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
