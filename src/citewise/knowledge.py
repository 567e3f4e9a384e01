"""KnowledgeBase: the public entry point that ties store, embedder, search and answers together."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from citewise.config import RequestSettings, Settings
from citewise.embedding import CachedEmbedder, EmbeddingCache, get_embedder
from citewise.embedding.base import Embedder, get_embedder_factory
from citewise.errors import ConfigurationError, KnowledgeBaseError, SourceError
from citewise.extractive import extractive_answer
from citewise.indexing import IndexReport, Progress, folder_scopes, index_folder
from citewise.kbconfig import META_STRATEGY, KBConfig
from citewise.llm import chat_model_configured
from citewise.locking import kb_write_lock
from citewise.models import Answer, Document, Hit
from citewise.retrieval import search
from citewise.sources import SourceFile
from citewise.sources.nav import ScopeRule
from citewise.store import SearchFilter, SQLiteStore, Store
from citewise.strategies import StrategyWindows

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
        model: the chat model for question generation (``qa``), query rewrites and the LLM
            reranker, instead of the one the settings configure.

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
        model: BaseChatModel | None = None,
    ) -> None:
        self.name = name
        self.settings = settings or Settings.from_env()
        self.store: Store = store or SQLiteStore(self.settings.kb_dir)
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        self._model = model

    @classmethod
    def create(
        cls,
        name: str,
        config: KBConfig | None = None,
        *,
        settings: Settings | None = None,
        store: Store | None = None,
        embedder: Embedder | None = None,
        model: BaseChatModel | None = None,
    ) -> KnowledgeBase:
        """Create an empty knowledge base with its own settings (``KnowledgeBaseError`` if
        it exists). The embedder is checked now, so a typo fails before any upload."""
        kb = cls(name, settings=settings, store=store, embedder=embedder, model=model)
        config = config or KBConfig(embedder=kb.settings.embedder)
        with kb.write_lock():
            if kb.exists:
                raise KnowledgeBaseError(f"knowledge base {name!r} already exists")
            if embedder is None:
                get_embedder_factory(config.embedder)
            kb.store.create(name, config.to_meta())
        return kb

    @property
    def config(self) -> KBConfig:
        """Strategy, embedder, retrieval defaults and description (defaults for an index
        built by ``citewise index``)."""
        self._require()
        meta = self.store.get_meta(self.name)
        return KBConfig.from_meta(meta, default_embedder=self.settings.embedder)

    @property
    def model(self) -> BaseChatModel | None:
        """The chat model for ``qa``, rewrites and LLM reranking (None when none is set)."""
        if self._model is None and chat_model_configured(self.settings):
            from citewise.llm import chat_model

            self._model = chat_model(self.settings)
        return self._model

    def write_lock(self) -> AbstractContextManager[None]:
        """Serializes this knowledge base's ingests and deletes (across processes too)."""
        root = getattr(self.store, "root", self.settings.kb_dir)
        return kb_write_lock(Path(root), self.name)

    @property
    def exists(self) -> bool:
        return self.store.exists(self.name)

    @property
    def embedder(self) -> Embedder:
        """The embedder this knowledge base was built with (or will be, if new)."""
        # Parallel searches (one per planned query) may ask at once: load the model once.
        with self._embedder_lock:
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
        stored = self.store.get_meta(self.name) if self.exists else {}
        # A knowledge base made by `kb create` keeps its strategy; others use the settings.
        config = self.config if META_STRATEGY in stored else None
        windows = self._windows(config) if config is not None else None
        with self.write_lock():
            report = index_folder(
                self.store,
                self.embedder,
                self.name,
                folder,
                site_url=site_url,
                version=version,
                max_chars=config.strategy.parent_chars if config else self.settings.max_chars,
                progress=progress,
                extra_meta={"embedder_name": self.embedder_name, **(meta or {})},
                scopes=folder_scopes(folder, scope_rule, site_config=site_config),
                windows_of=windows,
            )
        report.failures = list(windows.failures) if windows is not None else []
        return report

    def add_files(self, paths: Sequence[Path], *, scope: str = "") -> IndexReport:
        """Add files (any supported format) by their file names; see :meth:`add_documents`."""
        from citewise.ingest import source_from_bytes
        from citewise.limits import read_limited

        sources = []
        for path in paths:
            try:
                data = read_limited(path)
            except OSError as error:
                raise SourceError(f"{path}: cannot read it ({error.strerror})") from None
            sources.append(source_from_bytes(path.name, data))
        return self.add_documents(sources, scope=scope)

    def add_documents(self, sources: Sequence[SourceFile], *, scope: str = "") -> IndexReport:
        """Add (or replace) documents under the knowledge base's strategy, in one write.

        Serialized with other ingests and deletes of this knowledge base; searches meanwhile
        see the state before it until it commits. Chunks whose ``qa`` questions could not be
        generated are listed in the report's ``failures``.
        """
        from citewise.ingest import add_sources

        config = self.config
        windows = self._windows(config)
        with self.write_lock():
            report = add_sources(
                self.store, self.embedder, self.name, sources,
                max_chars=config.strategy.parent_chars, windows_of=windows, scope=scope,
            )  # fmt: skip
        report.failures = list(windows.failures)
        return report

    def delete_document(self, doc_id: str) -> int:
        """Delete a document's chunks and vectors; how many chunks went (0 if it was absent)."""
        self._require()
        with self.write_lock():
            return self.store.delete_document(self.name, doc_id)

    def drop(self) -> None:
        """Delete the knowledge base and everything in it."""
        self._require()
        with self.write_lock():
            self.store.drop(self.name)

    def retrieve(self, query: str, options: Mapping[str, object] | None = None) -> list[Hit]:
        """Search with the knowledge base's retrieval defaults, overridden by ``options``
        (``top_k``, ``search_type``, ``query_rewrite``, ``rerank``, ``context_window``,
        ``scope``, ``doc_ids``, ``page_prefix``: see ``RetrievalOptions``)."""
        from citewise._sync import run_sync

        return run_sync(self.aretrieve(query, options))

    async def aretrieve(self, query: str, options: Mapping[str, object] | None = None) -> list[Hit]:
        from citewise.retrieval.pipeline import retrieve

        chosen = self.config.defaults.merged(options)
        return await retrieve(
            self.store, self.embedder, self.name, query, chosen,
            model=self.model if chosen.needs_model else None,
        )  # fmt: skip

    def _windows(self, config: KBConfig) -> StrategyWindows:
        model = self.model if config.strategy.name == "qa" else None
        return StrategyWindows(config.strategy, self.embedder.window_chars, model)

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
                f"create it with: citewise index FOLDER --kb {self.name} (a docs folder) "
                f"or citewise kb create {self.name} (for files added with citewise doc add)"
            )


def scope_filter(scope: str | None) -> SearchFilter | None:
    if scope is None or scope == ALL_SCOPES:
        return None
    return SearchFilter(scope=scope)
