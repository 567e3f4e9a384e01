"""One request's resolved state: made once at the door, taken whole by the service.

A door (the OpenAI routes, the CLI, Python) resolves a request once —
:meth:`citewise.kb.KnowledgeBase.resolved` opens the store, reads its meta and merges the
knowledge base's defaults with the request's options, checking the scope, the query rewrite
and the reranker — and hands the :class:`Resolved` value to
:meth:`~citewise.kb.KnowledgeBase.astream` in place of options. Every search the answer makes
then runs on that store handle with those options: nothing is resolved, opened or read again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from citewise.options import SearchOptions
from citewise.store import KBStore

__all__ = ["Resolved"]


@dataclass(frozen=True)
class Resolved:
    """A request's options and store, resolved once.

    Args:
        options: the knowledge base's defaults overridden by the request's, checked.
        store: the knowledge base's store, opened for this request (None: the knowledge
            base does not exist yet, e.g. a release not built; a search then fails or
            builds it, as without a resolved request).
        meta: the store's meta, read once (the embedder, scopes and defaults come from it).
    """

    options: SearchOptions
    store: KBStore | None = None
    meta: Mapping[str, str] = field(default_factory=dict)
