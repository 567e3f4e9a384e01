"""One request's resolved state: made once at the door, taken whole by the service.

A door (the OpenAI routes, the CLI, Python) resolves a request once —
:meth:`citewise.kb.KnowledgeBase.resolved` opens the store, reads its meta and merges the
knowledge base's defaults with the request's options, checking the scope, the query rewrite
and the reranker — and hands the :class:`Resolved` value to
:meth:`~citewise.kb.KnowledgeBase.astream` in place of options. Every search the answer makes
then runs on that store handle with those options: nothing is resolved, opened or read again.

A knowledge base that is not built yet (a release served before anyone asked about it) is a
request with a deferred ``build``: a reply that searches nothing (a greeting) builds nothing,
and the first search builds it and runs there (:meth:`citewise.kb.KnowledgeBase.asearch`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from citewise.options import SearchOptions
from citewise.store import KBStore

if TYPE_CHECKING:
    from citewise.kb.knowledge_base import KnowledgeBase

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
        build: builds the knowledge base this request is for, which does not exist yet
            (``store`` is None): the first search calls it (off the event loop) and is
            resolved and run against what it returns. Blocking, thread-safe, and quick
            once built.
    """

    options: SearchOptions
    store: KBStore | None = None
    meta: Mapping[str, str] = field(default_factory=dict)
    build: Callable[[], KnowledgeBase] | None = None
