"""KnowledgeBase: the public entry point that ties store, embedder, search and answers together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from citewise.config import RequestSettings, Settings
from citewise.embedding import CachedEmbedder, EmbeddingCache, get_embedder
from citewise.embedding.base import Embedder
from citewise.errors import ConfigurationError, KnowledgeBaseError
from citewise.extractive import extractive_answer
from citewise.indexing import IndexReport, Progress, folder_scopes, index_folder
from citewise.llm import chat_model_configured
from citewise.models import Answer, Document, Hit
from citewise.retrieval import search
from citewise.sources.nav import ScopeRule
from citewise.store import SearchFilter, SQLiteStore, Store

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import MessageLikeRepresentation

ALL_SCOPES = "all"


class KnowledgeBase:
    """One named, indexed documentation set.

    Args:
        name: the knowledge base's name (its SQLite file is ``{home}/kb/{name}.sqlite``).
        settings: where data lives and which embedder new knowledge bases use.
        store: a Store to use instead of the SQLite default.
        embedder: an Embedder to use instead of the one the knowledge base was built with.

    Example::

        kb = KnowledgeBase("lgos")
        kb.index_folder(Path("docs"), site_url="https://example.org/", version="1.0")
        hits = kb.search("How do I add API key authentication?")
        answer = kb.ask("How do I add API key authentication?")
    """

    def __init__(
        self,
        name: str,
        *,
        settings: Settings | None = None,
        store: Store | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.name = name
        self.settings = settings or Settings.from_env()
        self.store: Store = store or SQLiteStore(self.settings.kb_dir)
        self._embedder = embedder

    @property
    def exists(self) -> bool:
        return self.store.exists(self.name)

    @property
    def embedder(self) -> Embedder:
        """The embedder this knowledge base was built with (or will be, if new)."""
        if self._embedder is None:
            meta = self.store.get_meta(self.name) if self.exists else {}
            name = meta.get("embedder_name") or self.settings.embedder
            cache = EmbeddingCache(self.settings.cache_path)
            self._embedder = CachedEmbedder(get_embedder(name), cache)
        return self._embedder

    def index_folder(
        self,
        folder: Path,
        *,
        site_url: str = "",
        version: str | None = None,
        progress: Progress | None = None,
        scope_rule: ScopeRule | None = None,
        site_config: Path | None = None,
        meta: Mapping[str, str] | None = None,
    ) -> IndexReport:
        """Index (or re-index, incrementally) a folder of documentation.

        Scopes come from the site's nav (``site_config``, or the ``mkdocs.yml`` or
        ``zensical.toml`` above ``folder``) by ``scope_rule``; without a nav, each file's
        top-level folder is its scope. ``meta`` is stored with the index in the same write.
        """
        return index_folder(
            self.store,
            self.embedder,
            self.name,
            folder,
            site_url=site_url,
            version=version,
            max_chars=self.settings.max_chars,
            progress=progress,
            extra_meta={"embedder_name": self.embedder_name, **(meta or {})},
            scopes=folder_scopes(folder, scope_rule, site_config=site_config),
        )

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes a search can name, ``all`` first (just ``all`` for an index without
        recorded scopes)."""
        self._require()
        recorded = self.store.get_meta(self.name).get("scopes", "").split()
        return (ALL_SCOPES, *(name for name in recorded if name != ALL_SCOPES))

    @property
    def embedder_name(self) -> str:
        meta = self.store.get_meta(self.name) if self.exists else {}
        return meta.get("embedder_name") or self.settings.embedder

    def search(
        self, query: str, *, k: int = 10, mode: str = "hybrid", scope: str | None = None
    ) -> list[Hit]:
        """The ``k`` sections that best match ``query``, best first.

        Args:
            mode: ``hybrid`` (dense + BM25 fused by RRF), ``vector`` or ``keyword``.
            scope: restrict the search to one part of the docs (``all`` or None: everything).
        """
        self._require()
        if scope is not None and scope != ALL_SCOPES:
            known = self.scopes
            # An index built before scopes were recorded cannot tell a typo from a scope.
            if len(known) > 1 and scope not in known:
                raise ConfigurationError(
                    f"unknown scope {scope!r} in {self.name!r}: use one of {', '.join(known)}"
                )
        return search(
            self.store, self.embedder, self.name, query, k=k, mode=mode, filter=scope_filter(scope)
        )

    def ask(
        self,
        question: str | Sequence[MessageLikeRepresentation],
        *,
        k: int = 10,
        scope: str | None = None,
        model: BaseChatModel | None = None,
        workflow: str = "citewise-rag",
    ) -> Answer:
        """Answer ``question`` (or a conversation ending with it), citing the sections used.

        With a chat model (``model``, or the one the settings configure) the ``workflow``
        writes the answer: ``citewise-rag`` (plan → retrieve → answer) or
        ``citewise-agentic``. Without one the answer is extractive: the passages that best
        match the question, quoted and cited. ``citewise.answering`` streams the same answer.
        """
        if model is None and not chat_model_configured(self.settings):
            if not isinstance(question, str):
                from citewise.answering import conversation

                question = conversation(question)[-1].text
            return extractive_answer(question, self.search(question, k=k, scope=scope))
        from citewise.answering import answer
        from citewise.llm import chat_model

        return answer(
            question,
            self,
            model or chat_model(self.settings),
            settings=RequestSettings(scope=scope or ALL_SCOPES, k=k),
            workflow=workflow,
        )

    def documents(self) -> list[Document]:
        self._require()
        return self.store.documents(self.name)

    def _require(self) -> None:
        if not self.exists:
            known = ", ".join(self.store.list_kbs()) or "none yet"
            raise KnowledgeBaseError(
                f"unknown knowledge base {self.name!r} (known: {known}); "
                f"create it with: citewise index FOLDER --kb {self.name}"
            )


def scope_filter(scope: str | None) -> SearchFilter | None:
    if scope is None or scope == ALL_SCOPES:
        return None
    return SearchFilter(scope=scope)
