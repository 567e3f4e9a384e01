"""The library: one store and the knowledge bases in it, each opened once per process."""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from citewise.config import Settings
from citewise.embedding import CachedEmbedder, EmbeddingCache, get_embedder
from citewise.embedding.base import Embedder, check_embedder
from citewise.errors import KnowledgeBaseError
from citewise.kb.config import KBConfig
from citewise.kb.models import ChatModels, ModelFactory
from citewise.retrieval.pipeline import check_names
from citewise.store import Store, open_store

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from citewise.kb.knowledge_base import KnowledgeBase

__all__ = ["Library"]


class Library:
    """Where knowledge bases live and what they share: the store, embedders, chat models.

    Every door opens knowledge bases through a library, so a knowledge base's embedder
    (an ONNX session) loads once per process however many routes use it.

    Args:
        settings: data and model settings (default: from ``CITEWISE_*``).
        store: a store engine instead of the one ``settings.store_url`` names.
        model_factory: makes the chat model instead of the settings (None from it:
            extractive answers); the server's tests inject a scripted model here.
    """

    # Weak: a library lives while a door (a server, a command, a knowledge base) holds it,
    # so a process that visits many homes (tests, a long-lived script) does not keep every
    # home's store, vectors and caches forever; the model sessions are shared below it.
    _shared: ClassVar[weakref.WeakValueDictionary[tuple[Path, str], Library]] = (
        weakref.WeakValueDictionary()
    )
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        store: Store | None = None,
        model_factory: ModelFactory | None = None,
    ) -> None:
        self.settings = settings or Settings.from_env()
        self.store: Store = store or open_store(self.settings.store_url, home=self.settings.home)
        if store is None:
            # A library held by nobody is collected (see ``_shared``): the store it opened
            # (a PostgreSQL pool, SQLite handles) is closed with it, not left to the GC.
            weakref.finalize(self, self.store.close)
        self.models = ChatModels(model_factory)
        self._open: dict[str, KnowledgeBase] = {}
        self._embedders: dict[str, Embedder] = {}
        self._cached: dict[str, Embedder] = {}
        self._lock = threading.Lock()
        self._embedder_lock = threading.Lock()

    @classmethod
    def shared(cls, settings: Settings | None = None) -> Library:
        """The process-wide library of ``settings``' home and store: the one in use, or a new
        one when nothing holds it any more."""
        settings = settings or Settings.from_env()
        key = (settings.home.expanduser().resolve(), settings.store_url or "")
        with cls._shared_lock:
            library = cls._shared.get(key)
            if library is None:
                library = cls._shared[key] = cls(settings)
            return library

    def get(self, name: str) -> KnowledgeBase:
        """The knowledge base ``name``, which need not exist yet (indexing creates it)."""
        from citewise.kb.knowledge_base import KnowledgeBase

        with self._lock:
            kb = self._open.get(name)
            if kb is None:
                kb = self._open[name] = KnowledgeBase(name, library=self)
            return kb

    def open(self, name: str) -> KnowledgeBase:
        """The existing knowledge base ``name`` (KnowledgeBaseError naming the known ones)."""
        kb = self.get(name)
        kb.require()
        return kb

    def create(self, name: str, config: KBConfig | None = None) -> KnowledgeBase:
        """Create an empty knowledge base with its own settings (KnowledgeBaseError if it
        exists). The embedder, and the query rewrite and reranker of its search defaults,
        are checked now, so a typo fails before any upload."""
        config = config or KBConfig(embedder=self.settings.embedder)
        check_names(config.defaults)
        with self.store.write_lock(name):
            if self.store.exists(name):
                raise KnowledgeBaseError(f"knowledge base {name!r} already exists")
            check_embedder(config.embedder)
            self.store.create(name, config.to_meta())
        return self.get(name)

    def names(self) -> list[str]:
        return self.store.names()

    def drop(self, name: str) -> None:
        """Delete the knowledge base ``name`` and everything in it."""
        self.open(name).drop()

    def forget(self, name: str) -> None:
        """Stop caching ``name`` (after a drop)."""
        with self._lock:
            self._open.pop(name, None)

    def embedder(self, name: str, *, cached: bool = True) -> Embedder:
        """The embedder registered as ``name``, loaded once, behind the embedding cache
        (``cached=False``: without it, for measuring the model itself)."""
        # Parallel searches (one per planned query) may ask at once: load the model once.
        with self._embedder_lock:
            bare = self._embedders.get(name)
            if bare is None:
                bare = self._embedders[name] = get_embedder(
                    name, prepared_dir=self.settings.models_dir
                )
            if not cached:
                return bare
            embedder = self._cached.get(name)
            if embedder is None:
                cache = EmbeddingCache(self.settings.cache_path)
                embedder = self._cached[name] = CachedEmbedder(bare, cache)
            return embedder

    def chat_model(self, settings: Settings | None = None) -> BaseChatModel | None:
        """The chat model (made once per configuration), or None for extractive answers."""
        return self.models.get(settings or self.settings)

    def close(self) -> None:
        self.store.close()
