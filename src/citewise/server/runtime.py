"""What the server serves: its options and the one library of knowledge bases every route uses."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import Request

from citewise.config import Settings, environment
from citewise.errors import KnowledgeBaseError
from citewise.kb import ALL_SCOPE, KnowledgeBase, Library, Resolved, SearchOptions
from citewise.kb.knowledge_base import Options
from citewise.kb.models import ModelFactory
from citewise.kb.releases import ReleaseIndex
from citewise.kb.sources import ReleaseSpec, ScopeRule
from citewise.server.auth import ADMIN_KEYS_ENV, API_KEYS_ENV, parse_keys
from citewise.server.links import LinkSigner

DEFAULT_KB = "docs"

__all__ = ["DEFAULT_KB", "Runtime", "ServerOptions", "default_kb", "runtime_of"]


@dataclass(frozen=True)
class ServerOptions:
    """Server-wide options (environment ``CITEWISE_*``, or ``citewise serve`` flags).

    Args:
        kb: the knowledge base a request uses when it names none (None: the only one in
            the store, else ``docs``; ``citewise serve`` checks it at start).
        release: a published release to serve (``CITEWISE_RELEASE=OWNER/REPO@VERSION``),
            fetched and indexed on first use; it is then the default knowledge base. As for
            ``citewise index --release``: ``CITEWISE_RELEASE_SITE_URL``,
            ``CITEWISE_RELEASE_VERSIONS_URL``, ``CITEWISE_RELEASE_ARCHIVE_URL``,
            ``CITEWISE_RELEASE_FALLBACK=latest`` and ``CITEWISE_RELEASE_SEPARATE_SCOPES``
            (nav sections kept out of ``library``, comma-separated).
        api_keys / admin_keys: bearer keys (``CITEWISE_API_KEYS`` / ``CITEWISE_ADMIN_KEYS``,
            comma-separated); empty leaves the routes open.
    """

    kb: str | None = None
    release: ReleaseSpec | None = None
    api_keys: frozenset[str] = frozenset()
    admin_keys: frozenset[str] = frozenset()
    # Chat Completions: stream status updates as reasoning_content for every request
    # (CITEWISE_SHOW_STATUS), not only for those whose settings ask.
    show_status: bool = False
    # Served beyond loopback with no API keys, as the operator asked (``--insecure-no-auth``,
    # CITEWISE_INSECURE_NO_AUTH): the admin API is then closed unless admin keys are set.
    insecure_no_auth: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServerOptions:
        env = environment() if environ is None else environ
        release = env.get("CITEWISE_RELEASE") or None
        package = None if release else env.get("CITEWISE_PACKAGE") or None
        spec = None
        if release or package:
            from citewise.kb.sources import release_spec

            options = release_options(env)
            if package:
                del options["fallback_latest"]  # the installed version is the one there is
            # The docs of the version installed here (or in CITEWISE_PACKAGE_PYTHON's).
            python = env.get("CITEWISE_PACKAGE_PYTHON") or None
            spec = release_spec(release, package=package, python=python, **options)
        return cls(
            kb=env.get("CITEWISE_KB") or None,
            release=spec,
            api_keys=parse_keys(env.get(API_KEYS_ENV)),
            admin_keys=parse_keys(env.get(ADMIN_KEYS_ENV)),
            show_status=_flag(env.get("CITEWISE_SHOW_STATUS")),
            insecure_no_auth=_flag(env.get("CITEWISE_INSECURE_NO_AUTH")),
        )


def _flag(value: str | None) -> bool:
    return (value or "").lower() in {"1", "true", "yes"}


def release_options(env: Mapping[str, str]) -> dict[str, Any]:
    """The :class:`ReleaseSpec` options the ``CITEWISE_RELEASE_*`` variables set."""
    separate = env.get("CITEWISE_RELEASE_SEPARATE_SCOPES", "").replace(",", " ").split()
    return {
        "site_url": env.get("CITEWISE_RELEASE_SITE_URL") or None,
        "versions_url": env.get("CITEWISE_RELEASE_VERSIONS_URL") or None,
        "archive_url": env.get("CITEWISE_RELEASE_ARCHIVE_URL") or None,
        "fallback_latest": env.get("CITEWISE_RELEASE_FALLBACK") == "latest",
        "scope_rule": ScopeRule(separate=tuple(separate)),
    }


class Runtime:
    """Everything the routes share: settings, options and one :class:`Library`.

    The OpenAI routes, the knowledge-base REST API, the model cards and a configured release
    all open knowledge bases through ``library``, so each is opened once (its embedder
    loaded once) and an upload is seen by the next answer. A configured release is the
    default knowledge base, fetched and indexed by the first request that needs it; until
    then it has no name of its own and only the default reaches it.

    Args:
        settings: data and model settings.
        options: default knowledge base, release and keys.
        model_factory: makes the chat model instead of ``settings`` (None from it:
            extractive answers); tests and the load check inject a scripted model here.
        library: the library to serve from (default: a new one of ``settings``).
    """

    def __init__(
        self,
        settings: Settings,
        options: ServerOptions,
        *,
        model_factory: ModelFactory | None = None,
        library: Library | None = None,
    ) -> None:
        self.settings = settings
        self.options = options
        self.library = library or Library(settings, model_factory=model_factory)
        # Signs the links answers give to uploaded documents (see citewise.server.links).
        self.links = LinkSigner.from_env(environment())
        self.release: ReleaseIndex | None = (
            ReleaseIndex(options.release, self.library) if options.release is not None else None
        )

    def kb(self, name: str | None = None) -> KnowledgeBase:
        """The existing knowledge base ``name`` (None: the default). Blocking: the first
        call may fetch and index the release.

        Raises:
            KnowledgeBaseError: no such knowledge base (the message names the known ones).
            SourceError: the release could not be fetched.
        """
        if self.release is not None and (name is None or name == self._release_name()):
            return self.release.get()
        name = name or self.default
        known = self.library.names()
        if name is None:
            raise KnowledgeBaseError(no_default_message(known))
        # Checked before opening so a request naming garbage leaves nothing in the cache.
        if name not in known:
            listed = ", ".join(known) or "none yet"
            raise KnowledgeBaseError(f"unknown knowledge base {name!r} (known: {listed})")
        return self.library.open(name)

    def answering(
        self, name: str | tuple[str, ...] | None = None, options: Options = None
    ) -> tuple[KnowledgeBase, Resolved]:
        """The knowledge base that answers a message and the request resolved once against
        it (:mod:`citewise.kb.request`). A release not built yet is built by the answer's
        first search, not before its plan (a greeting builds nothing). Several names,
        ``all``, or none when there is no default: the knowledge bases answering as one,
        each question routed to its libraries (:mod:`citewise.kb.multi`).

        Raises:
            KnowledgeBaseError: no such knowledge base.
            ConfigurationError: an unknown scope, query rewrite or reranker (``field``).
        """
        if self.release is not None and (name is None or name == self._release_name()):
            return self.release.request(options)
        kb = self._answering_kb(name)
        return kb, kb.resolved(options)

    def _answering_kb(self, name: str | tuple[str, ...] | None) -> KnowledgeBase:
        from citewise.kb.multi import ALL, KnowledgeBases

        if isinstance(name, tuple):
            kbs = KnowledgeBases(self.library, name)
            kbs.names  # noqa: B018  (refuses an unknown name now, naming the known ones)
            return kbs if len(name) > 1 else self.kb(name[0])
        if name == ALL and ALL not in self.library.names():
            return KnowledgeBases(self.library)
        if name is None and self.default is None and self._serves_all():
            return KnowledgeBases(self.library)
        return self.kb(name)

    def _serves_all(self) -> bool:
        """Several libraries and no default (or only libraries indexed on first use)."""
        from citewise.kb.multi import KnowledgeBases

        every = KnowledgeBases(self.library).names
        return len(every) > 1 or bool(every and not self.library.names())

    @property
    def default(self) -> str | None:
        """The knowledge base a request naming none gets: the configured one, else the
        only one in the store, else ``docs`` if there is one (None: none to choose)."""
        if self.options.kb is not None:
            return self.options.kb
        return default_kb(self.library.names())

    @property
    def default_name(self) -> str:
        """The default's name: ``all`` when every knowledge base answers (several, none the
        default)."""
        if self.release is None and self.default is None and self._serves_all():
            return "all"
        return self._release_name() or self.default or DEFAULT_KB

    def _release_name(self) -> str | None:
        if self.release is None:
            return None
        if self.release.ready:
            return self.release.get().name
        return self.release.kb_name

    def names(self) -> list[str]:
        """The knowledge bases in the store (and the release's, once built), building none."""
        release = self._release_name()
        return sorted({*self.library.names(), *([release] if release else [])})

    def _available(self, name: str | None) -> KnowledgeBase | None:
        """``name`` (None: the default) if it can be used without building a release."""
        if self.release is not None and name is None and not self.release.ready:
            return None
        try:
            return self.kb(name)
        except KnowledgeBaseError:
            return None

    def scopes(self, name: str | None = None) -> tuple[str, ...]:
        """The scopes of ``name`` if it is available now (a release not built yet: ``all``)."""
        kb = self._available(name)
        return kb.scopes if kb is not None else (ALL_SCOPE,)

    def defaults(self, name: str | None = None) -> SearchOptions:
        """The search defaults of ``name`` (None: the default knowledge base); the built-in
        ones while it is unavailable (a release not built yet)."""
        kb = self._available(name)
        return kb.config.defaults if kb is not None else SearchOptions()


def default_kb(names: list[str]) -> str | None:
    """The knowledge base to serve when none is named: the only one, or ``docs`` among
    several (None: there is none, or several and no ``docs``)."""
    if len(names) == 1:
        return names[0]
    return DEFAULT_KB if DEFAULT_KB in names else None


def no_default_message(names: list[str]) -> str:
    """Why there is no default knowledge base among ``names``, and what to do."""
    if not names:
        return (
            "no knowledge base yet: index one (citewise index DIR --kb NAME) or upload one "
            "(POST /v1/knowledge-bases)"
        )
    return (
        f"several knowledge bases ({', '.join(names)}) and none is the default: start the "
        "server with --kb NAME (CITEWISE_KB), or name one in the request's settings (kb)"
    )


_RUNTIME_LOCK = threading.Lock()


def runtime_of(request: Request) -> Runtime:
    """The app's runtime: ``create_app``'s, or (an app that only includes a router) one made
    from the environment on first use."""
    state = request.app.state
    with _RUNTIME_LOCK:
        runtime = getattr(state, "runtime", None)
        if runtime is None:
            runtime = state.runtime = Runtime(Settings.from_env(), ServerOptions.from_env())
    assert isinstance(runtime, Runtime)
    return runtime
