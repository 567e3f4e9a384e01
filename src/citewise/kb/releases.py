"""Release docs as knowledge bases: fetch a release (``citewise.sources.release``), then ingest."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx

from citewise.errors import ConfigurationError
from citewise.kb import vector_fill
from citewise.kb.config import META_RELEASE_CHOICES
from citewise.kb.ingest import IndexReport, Progress
from citewise.kb.knowledge_base import KnowledgeBase, Options
from citewise.kb.library import Library
from citewise.kb.request import Resolved
from citewise.options import SearchOptions
from citewise.parsing.markdown import site_base
from citewise.sources.release import (
    FetchedRelease,
    FetchLimits,
    ReleaseSpec,
    fetch_release,
    release_kb_name,
)

__all__ = [
    "ReleaseIndex",
    "ReleaseIndexResult",
    "index_release",
    "remembered_choices",
]


@dataclass(frozen=True)
class ReleaseIndexResult:
    """An indexed release: its knowledge base, what the run did and the release used."""

    kb: KnowledgeBase
    report: IndexReport
    release: FetchedRelease


def index_release(
    spec: ReleaseSpec,
    library: Library,
    *,
    kb_name: str | None = None,
    rebuild: bool = False,
    client: httpx.Client | None = None,
    limits: FetchLimits | None = None,
    refresh: bool = False,
    progress: Progress | None = None,
    embedder: str | None = None,
    meta: Mapping[str, str] | None = None,
    vectors_later: bool = False,
) -> ReleaseIndexResult:
    """Fetch a release (or find it cached) and index it incrementally into ``kb_name``
    (default ``{repo}-{release}``), its section URLs those of the published site.

    The knowledge base's meta records ``release``, ``requested_version``, ``release_match``
    and the site choices the user gave (``release_choices``: site URL, layout, version
    segment…). A later run into the same knowledge base reuses those it does not override,
    and one that would cite another site than the knowledge base does without being told to
    is refused: citations are never silently rewritten. ``meta``: more to record (the
    installed ``package`` it documents). ``vectors_later``: written text first, its
    vectors left to :func:`citewise.kb.ingesting.complete_vectors` (see ``index_folder``).

    Raises:
        ConfigurationError: the run would change the knowledge base's site unasked.
    """
    settings = library.settings.with_overrides(embedder=embedder)
    guess = KnowledgeBase(kb_name or release_kb_name(spec.repo, spec.version), library=library)
    spec = spec.with_choices(remembered_choices(guess))
    fetched = fetch_release(spec, library.settings, client=client, limits=limits, refresh=refresh)
    name = kb_name or release_kb_name(spec.repo, fetched.version)
    if name != guess.name:  # the release resolved to another version: its own remembered choices
        remembered = remembered_choices(KnowledgeBase(name, library=library))
        if spec.with_choices(remembered) != spec:
            spec = spec.with_choices(remembered)
            fetched = fetch_release(
                spec, library.settings, client=client, limits=limits, refresh=refresh
            )
    kb = KnowledgeBase(name, settings=settings, library=library)
    published = fetched.published
    _refuse_silent_rewrite(kb, spec, published.site_url, published.version)
    choices = {**remembered_choices(kb), **spec.choices()}
    report = kb.index_folder(
        fetched.docs,
        site_url=published.site_url,
        version=published.version or None,
        progress=progress,
        scope_rule=spec.scope_rule,
        meta={
            **fetched.meta(),
            **(meta or {}),
            META_RELEASE_CHOICES: json.dumps(choices, sort_keys=True),
        },  # fmt: skip
        rebuild=rebuild,
        # A release's knowledge base mirrors whichever release was last indexed into it.
        replace=True,
        page_form=spec.page_form,
        api_dependencies=spec.api_dependencies,
        vectors_later=vectors_later,
    )
    return ReleaseIndexResult(kb, report, fetched)


def remembered_choices(kb: KnowledgeBase) -> dict[str, str]:
    """The site choices a release's knowledge base was indexed with (empty for a new one)."""
    if not kb.exists:
        return {}
    try:
        found = json.loads(kb.meta().get(META_RELEASE_CHOICES) or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _refuse_silent_rewrite(kb: KnowledgeBase, spec: ReleaseSpec, site: str, version: str) -> None:
    """A knowledge base that cites one site is not moved to another one found by a guess."""
    if not kb.exists or spec.site_url or spec.docs_version is not None:
        return  # new, or the user named the site or its version segment: that is the ask
    meta = kb.meta()
    recorded_site, recorded_version = meta.get("site_url", ""), meta.get("version", "")
    was, now = site_base(recorded_site, recorded_version), site_base(site, version)
    if not recorded_site or was == now:
        return
    raise ConfigurationError(
        f"knowledge base {kb.name!r} cites {was}, but this run found {now} (from "
        f"{'the package metadata' if spec.site_hint else 'a guess'}); its citations are not "
        f"rewritten unasked: pass --site-url {recorded_site} (with --version "
        f"{recorded_version or chr(39) * 2}) to keep them, or --site-url for the new site"
    )


class ReleaseIndex:
    """The index of one release, built on first use and then reused (for the server).

    Built text first where the store allows it (:mod:`citewise.kb.vector_fill`): the first
    search is answered by keywords while a background thread embeds the release.

    ``get()`` is thread-safe: concurrent first callers wait for one build. A failed build
    raises its error (a ``SourceError`` naming the cause), keeps nothing, and the next call
    tries again.
    """

    def __init__(
        self,
        spec: ReleaseSpec,
        library: Library,
        *,
        kb_name: str | None = None,
        client_factory: Callable[[], httpx.Client] | None = None,
        limits: FetchLimits | None = None,
    ) -> None:
        self.spec = spec
        self.library = library
        self.kb_name = kb_name
        self.limits = limits
        self._client_factory = client_factory
        self._lock = threading.Lock()
        self._result: ReleaseIndexResult | None = None

    @property
    def ready(self) -> bool:
        return self._result is not None

    @property
    def release(self) -> FetchedRelease | None:
        """The release the index was built from (after the first ``get()``)."""
        return self._result.release if self._result else None

    def get(self) -> KnowledgeBase:
        with self._lock:
            if self._result is None:
                client = self._client_factory() if self._client_factory else None
                try:
                    # Text first: the search that asked is answered by keywords now, the
                    # vectors are computed in the background (hybrid once done).
                    self._result = index_release(
                        self.spec, self.library, kb_name=self.kb_name, client=client,
                        limits=self.limits, vectors_later=True,
                    )  # fmt: skip
                finally:
                    if client is not None:
                        client.close()
                vector_fill.start(self._result.kb)
            return self._result.kb

    def request(self, options: Options = None) -> tuple[KnowledgeBase, Resolved]:
        """The release's knowledge base and a request for it (:mod:`citewise.kb.request`):
        resolved against the index once built; before that, the built-in defaults
        overridden by ``options``, with the build deferred to the answer's first search
        (a greeting builds nothing; the scope is checked once the release is built)."""
        if self.ready:
            kb = self.get()
            return kb, kb.resolved(options)
        if isinstance(options, Resolved):
            options = options.options
        kb = KnowledgeBase(self.kb_name or self.spec.repo, library=self.library)
        return kb, Resolved(SearchOptions().merged(options), build=self.get)
