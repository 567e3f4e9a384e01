"""What the server serves: its options, the knowledge bases it can answer from, the chat model."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from citewise.config import Settings
from citewise.errors import KnowledgeBaseError
from citewise.knowledge import ALL_SCOPES, KnowledgeBase
from citewise.server.auth import ADMIN_KEYS_ENV, API_KEYS_ENV, parse_keys
from citewise.sources.release import ReleaseIndex, ReleaseSpec

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

DEFAULT_KB = "docs"

__all__ = ["DEFAULT_KB", "KnowledgeBases", "Runtime", "ServerOptions"]


@dataclass(frozen=True)
class ServerOptions:
    """Server-wide options (environment ``CITEWISE_*``, or ``citewise serve`` flags).

    Args:
        kb: the knowledge base a request uses when it names none.
        release: a published release to serve (``CITEWISE_RELEASE=OWNER/REPO@VERSION``),
            fetched and indexed on first use; it is then the default knowledge base.
        api_keys / admin_keys: bearer keys (``CITEWISE_API_KEYS`` / ``CITEWISE_ADMIN_KEYS``,
            comma-separated); empty leaves the routes open.
    """

    kb: str = DEFAULT_KB
    release: ReleaseSpec | None = None
    api_keys: frozenset[str] = frozenset()
    admin_keys: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServerOptions:
        env = os.environ if environ is None else environ
        release = env.get("CITEWISE_RELEASE")
        spec = None
        if release:
            spec = ReleaseSpec.parse(
                release,
                site_url=env.get("CITEWISE_RELEASE_SITE_URL") or None,
                fallback_latest=env.get("CITEWISE_RELEASE_FALLBACK") == "latest",
            )
        return cls(
            kb=env.get("CITEWISE_KB") or DEFAULT_KB,
            release=spec,
            api_keys=parse_keys(env.get(API_KEYS_ENV)),
            admin_keys=parse_keys(env.get(ADMIN_KEYS_ENV)),
        )


@dataclass
class KnowledgeBases:
    """The knowledge bases requests may name, each opened once (its embedder loads once).

    A configured release is the default and is fetched and indexed by the first request
    that needs it; until then it has no name of its own and only the default reaches it.
    """

    settings: Settings
    default: str = DEFAULT_KB
    release: ReleaseIndex | None = None
    _open: dict[str, KnowledgeBase] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, name: str | None = None) -> KnowledgeBase:
        """The knowledge base ``name`` (None: the default). Blocking: may build a release.

        Raises:
            KnowledgeBaseError: no such knowledge base.
            SourceError: the release could not be fetched.
        """
        if self.release is not None and (name is None or name == self._release_name()):
            return self.release.get()
        name = name or self.default
        with self._lock:
            kb = self._open.get(name)
            if kb is None:
                kb = KnowledgeBase(name, settings=self.settings)
                if not kb.exists:
                    known = ", ".join(self.names()) or "none yet"
                    raise KnowledgeBaseError(f"unknown knowledge base {name!r} (known: {known})")
                self._open[name] = kb
            return kb

    @property
    def default_name(self) -> str:
        return self._release_name() or self.default

    def _release_name(self) -> str | None:
        if self.release is None:
            return None
        if self.release.ready:
            return self.release.get().name
        return self.release.kb_name

    def names(self) -> list[str]:
        """The knowledge bases on disk (and the release's, once built), without building one."""
        names = KnowledgeBase(self.default, settings=self.settings).store.list_kbs()
        release = self._release_name()
        return sorted({*names, *([release] if release else [])})

    def scopes(self, name: str | None = None) -> tuple[str, ...]:
        """The scopes of ``name`` if it is available now (a release not built yet: ``all``)."""
        if self.release is not None and name is None and not self.release.ready:
            return (ALL_SCOPES,)
        try:
            return self.get(name).scopes
        except KnowledgeBaseError:
            return (ALL_SCOPES,)


class Runtime:
    """Everything the routes share: settings, options, knowledge bases and the chat model."""

    def __init__(
        self,
        settings: Settings,
        options: ServerOptions,
        *,
        model_factory: Callable[[], BaseChatModel | None] | None = None,
    ) -> None:
        self.settings = settings
        self.options = options
        release = ReleaseIndex(options.release, settings) if options.release is not None else None
        self.kbs = KnowledgeBases(settings, default=options.kb, release=release)
        self._model_factory = model_factory or self._configured_model
        self._model: BaseChatModel | None = None
        self._model_made = False
        self._model_lock = threading.Lock()

    def _configured_model(self) -> BaseChatModel | None:
        from citewise.llm import chat_model

        return chat_model(self.settings)

    def model(self) -> BaseChatModel | None:
        """The chat model (made once, on first use), or None for extractive answers."""
        with self._model_lock:
            if not self._model_made:
                self._model = self._model_factory()
                self._model_made = True
            return self._model
