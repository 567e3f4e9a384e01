"""KnowledgeBase: every use-case of one knowledge base (ingest, search, answer) in one place.

The CLI, the server, MCP, the evaluation harness and Python code all call these methods, so a
question with the same options gets the same hits whichever door it came through. The class is
the service layer's whole surface for one knowledge base, hence one module; the work itself is
in ``kb.ingesting``/``kb.ingest``, ``kb.reading``, ``retrieval.pipeline`` and ``answering``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citewise import telemetry
from citewise.answering import (
    DEFAULT_WORKFLOW,
    Done,
    Event,
    Status,
    TextDelta,
    afinal_answer,
    astream_answer,
    final_answer,
)
from citewise.asyncbridge import iterate_in_thread, run_sync, to_thread
from citewise.config import Settings
from citewise.embedding.base import Embedder
from citewise.errors import ConfigurationError, KnowledgeBaseError
from citewise.kb.config import KBConfig, stored_embedder
from citewise.kb.metadata_filter import narrowed
from citewise.kb.request import Resolved
from citewise.models import Answer, Document, Hit, Section, Verification
from citewise.options import ALL_SCOPE, SearchOptions
from citewise.retrieval.pipeline import (
    check_names,
    is_synchronous,
    retrieve,
    retrieve_sync,
    while_embedding,
)
from citewise.store import KBStore, Store

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import MessageLikeRepresentation

    from citewise.kb.ingest import IndexReport, Progress
    from citewise.kb.library import Library
    from citewise.sources import SourceFile
    from citewise.sources.crawl_limits import CrawlLimits
    from citewise.sources.nav import ScopeRule

__all__ = ["KnowledgeBase", "OnSearch"]

# Called once per search made to answer a question (the server counts them).
OnSearch = Callable[[str], None]
Options = Mapping[str, Any] | SearchOptions | Resolved | None


class KnowledgeBase:
    """One named, indexed documentation set.

    Args:
        name: the knowledge base's name.
        settings: where data lives and which models to use (default: ``CITEWISE_*``).
        store: a store engine to use instead of the one ``settings.store_url`` names.
        embedder: an embedder to use instead of the one the knowledge base was built with.
        model: the chat model that writes answers, question generation (``qa``), query
            rewrites and the LLM reranker use, instead of the one the settings configure
            (it wins over a ``chat_model`` the knowledge base or a request names).
        library: the library to open it in (default: the process-wide one of ``settings``).

    Example::

        kb = KnowledgeBase("lgos")
        kb.index_folder(Path("docs"), site_url="https://example.org/", version="1.0")
        hits = kb.search("How do I add API key authentication?", top_k=5)
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
        library: Library | None = None,
    ) -> None:
        from citewise.kb.library import Library

        if library is None:
            library = Library(settings, store=store) if store else Library.shared(settings)
        self.name = name
        self.library = library
        self.settings = settings or library.settings
        self._embedder = embedder
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
        kb.library.create(name, config or KBConfig(embedder=kb.settings.embedder))
        return kb

    # -- what it is ------------------------------------------------------------------------

    @property
    def exists(self) -> bool:
        return self.library.store.exists(self.name)

    @property
    def store(self) -> KBStore:
        """The store handle of this knowledge base (KnowledgeBaseError if it does not exist)."""
        self.require()
        return self.library.store.open(self.name)

    def meta(self) -> dict[str, str]:
        return self.store.meta()

    @property
    def config(self) -> KBConfig:
        """Strategy, embedder, search defaults and description (defaults for an index
        built by ``citewise index``)."""
        return KBConfig.from_meta(self.meta(), default_embedder=self.settings.embedder)

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes a search can name, ``all`` first (just ``all`` for an index without
        recorded scopes)."""
        return _scopes(self.meta())

    @property
    def embedder_name(self) -> str:
        meta = self.meta() if self.exists else {}
        return stored_embedder(meta)[0] or self.settings.embedder

    @property
    def embedder(self) -> Embedder:
        """The embedder this knowledge base was built with (or will be, if new)."""
        if self._embedder is not None:
            return self._embedder
        return self.library.embedder(self.embedder_name)

    @property
    def model(self) -> BaseChatModel | None:
        """The chat model: the one given to this knowledge base, else the configured one
        (None: answers are extractive, and rewrites and LLM reranking are unavailable)."""
        if self._model is not None:
            return self._model
        return self.library.chat_model(self.settings)

    def model_for(self, name: str | None) -> BaseChatModel | None:
        """The chat model ``name`` (a ``chat_model`` option: a model at the configured
        endpoint, or ``local``), made once per process; None names :attr:`model`. A model
        given to this knowledge base wins over any name."""
        if name is None or self._model is not None:
            return self.model
        return self.library.chat_model(self.settings.with_overrides(llm_model=name))

    def documents(self) -> list[Document]:
        return self.store.documents()

    def document_text(self, doc_id: str) -> str | None:
        """A document's text as Markdown, rebuilt from its stored chunks (None: no such
        document). The original file is not stored."""
        from citewise.kb.reading import document_chunks, text_of

        found = [d for d in self.documents() if d.doc_id == doc_id]
        return text_of(document_chunks(self.store, doc_id, found[0].title)) if found else None

    def document_html(self, doc_id: str) -> str | None:
        """A document as an HTML page whose headings carry the sections' anchors (None: no
        such document): where citations of a knowledge base with no site URL land."""
        from citewise.kb.reading import document_chunks, html_of

        found = [d for d in self.documents() if d.doc_id == doc_id]
        if not found:
            return None
        return html_of(document_chunks(self.store, doc_id, found[0].title), found[0].title)

    def section(self, url: str, *, readable: bool = False) -> str | None:
        """The whole section at ``url`` (a cited URL) as Markdown (None: no such section);
        ``readable``: without the site's build markup (``# (1)!`` markers, attribute lists,
        fence attributes), as an agent or a quote should read it."""
        from citewise.kb.reading import section_chunks, text_of

        chunks = section_chunks(self.store, self.documents(), url)
        if not chunks:
            return None
        if readable:
            from citewise.extractive import clean_markup

            return clean_markup(text_of(chunks))
        return text_of(chunks)

    def example_headings(self, count: int = 4) -> list[str]:
        """Up to ``count`` page titles to suggest questions about, spread over the docs."""
        from citewise.kb.reading import example_headings

        return example_headings(self.documents(), count)

    def describe(self) -> dict[str, Any]:
        """Settings and size, as the CLI and the REST API show a knowledge base."""
        handle = self.store
        return {
            "name": self.name,
            **self.config.as_json(),
            "documents": len(handle.documents()),
            "chunks": len(handle.chunk_ids()),
        }

    def require(self) -> None:
        if not self.exists:
            known = ", ".join(self.library.names()) or "none yet"
            raise KnowledgeBaseError(
                f"unknown knowledge base {self.name!r} (known: {known}); "
                f"create it with: citewise index FOLDER --kb {self.name} (a docs folder) "
                f"or citewise kb create {self.name} (for files added with citewise doc add)"
            )

    def write_lock(self) -> AbstractContextManager[None]:
        """Serializes this knowledge base's ingests and deletes (across processes too)."""
        return self.library.store.write_lock(self.name)

    # -- ingest (citewise.kb.ingesting) ---------------------------------------------------

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
        rebuild: bool = False,
        replace: bool = False,
        page_form: str | None = None,
        api_dependencies: Sequence[Path] = (),
        vectors_later: bool = False,
    ) -> IndexReport:
        """Bring the knowledge base in line with a docs folder (see
        :func:`citewise.kb.ingesting.index_folder`): new and changed files are indexed, files
        gone from it leave; another folder needs ``replace``; ``rebuild`` re-embeds all, the
        old index staying until the new one is ready. ``vectors_later``: written text first
        (keyword search at once), embedded afterwards by :meth:`complete_vectors`."""
        from citewise.kb import ingesting  # loaded when first used: searches never need it

        return ingesting.index_folder(
            self, folder, site_url=site_url, version=version, progress=progress,
            scope_rule=scope_rule, site_config=site_config, meta=meta, rebuild=rebuild,
            replace=replace, page_form=page_form, api_dependencies=api_dependencies,
            vectors_later=vectors_later,
        )  # fmt: skip

    def complete_vectors(self, on_batch: Callable[[int, int], None] | None = None) -> int:
        """Embed the chunks stored without vectors (a text-first index, or one an
        interrupted run left), batch by batch; how many were embedded. Until none is left,
        searches are keyword-only."""
        from citewise.kb import ingesting

        return ingesting.complete_vectors(self, on_batch)

    def index_url(
        self,
        url: str,
        *,
        limits: CrawlLimits | None = None,
        progress: Progress | None = None,
        rebuild: bool = False,
        replace: bool = False,
    ) -> IndexReport:
        """Crawl the published site under ``url`` and index its pages (see
        :func:`citewise.kb.crawling.index_url`): a re-crawl sends conditional requests and
        re-embeds only what changed; pages gone from the site leave. ``limits`` bound the
        crawl (default: ``CITEWISE_CRAWL_*``); each bound hit is in the report's ``limits``."""
        from citewise.kb import crawling  # loaded when first used: searches never need it

        return crawling.index_url(
            self, url, limits=limits, progress=progress, rebuild=rebuild, replace=replace
        )

    def add_files(
        self, paths: Sequence[Path], *, scope: str = "", parsed: Path | None = None
    ) -> IndexReport:
        """Add files (any supported format) by their file names, and the documents of a
        parsed-content JSON file ``parsed`` (preferred over files of the same id)."""
        from citewise.kb import ingesting  # loaded when first used: searches never need it

        return ingesting.add_files(self, paths, scope=scope, parsed=parsed)

    def add_documents(self, sources: Sequence[SourceFile], *, scope: str = "") -> IndexReport:
        """Add (or replace) documents under the knowledge base's strategy, in one write;
        chunks whose ``qa`` questions failed are in the report's ``failures``."""
        from citewise.kb import ingesting  # loaded when first used: searches never need it

        return ingesting.add_documents(self, sources, scope=scope)

    def add_upload(
        self, files: Sequence[tuple[str, bytes]], *, scope: str = "", parsed: bytes | None = None
    ) -> IndexReport:
        """Add uploaded ``(name, bytes)`` files (names are checked to be safe ids), and the
        parsed-content JSON ``parsed`` (an external parser's output, preferred over files
        of the same id; docs/knowledge-bases.md has its schema)."""
        from citewise.kb import ingesting  # loaded when first used: searches never need it

        return ingesting.add_upload(self, files, scope=scope, parsed=parsed)

    def add_sections(
        self, documents: Mapping[str, Sequence[Section]], *, progress: Progress | None = None
    ) -> IndexReport:
        """Add documents already parsed into sections (a benchmark corpus, another parser)."""
        from citewise.kb import ingesting  # loaded when first used: searches never need it

        return ingesting.add_sections(self, documents, progress=progress)

    def delete_document(self, doc_id: str) -> int:
        """Delete a document's chunks and vectors; how many chunks went (0 if it was absent)."""
        handle = self.store
        with telemetry.operation("delete", doc_id, kb=self.name) as op, self.write_lock():
            before = len(handle.chunk_ids())
            handle.apply(removed_doc_ids=[doc_id])
            removed = before - len(handle.chunk_ids())
            op.set(chunks=removed)
            return removed

    def drop(self) -> None:
        """Delete the knowledge base and everything in it."""
        self.require()
        with self.write_lock():
            self.library.store.drop(self.name)
        self.library.forget(self.name)

    # -- search ----------------------------------------------------------------------------

    def resolve(self, options: Options = None, /, **overrides: Any) -> SearchOptions:
        """This knowledge base's search defaults, overridden by ``options`` and then by
        keyword ``overrides`` (``None`` keeps a default). An unknown scope, query rewrite or
        reranker raises ConfigurationError naming the known ones (``field``: which). A
        ``doc_metadata`` filter becomes the ``doc_ids`` of the documents it matches
        (``kb.metadata_filter``)."""
        return self.resolved(options, **overrides).options

    def resolved(self, options: Options = None, /, **overrides: Any) -> Resolved:
        """The request resolved once (:mod:`citewise.kb.request`): the store opened, its
        meta read and the options resolved as :meth:`resolve` does. Given a ``Resolved``,
        its options are the ones overridden (its store and meta are kept)."""
        if isinstance(options, Resolved):
            if not overrides:
                return options
            store, meta, build = options.store, options.meta, options.build
            checked = _checked(self.name, options.options.merged(overrides), meta)
        else:
            store, build = self.store, None
            meta = store.meta()
            defaults = KBConfig.from_meta(meta, default_embedder=self.settings.embedder).defaults
            checked = _checked(self.name, defaults.merged(options).merged(overrides), meta)
        if checked.doc_metadata and store is not None:
            checked = narrowed(checked, store.documents())
        return Resolved(checked, store, meta, build)

    async def asearch(self, query: str, options: Options = None, /, **overrides: Any) -> list[Hit]:
        """The sections that best match ``query``, best first, under this knowledge base's
        search defaults overridden by ``options`` (see :class:`citewise.SearchOptions`:
        ``top_k``, ``search_type``, ``query_rewrite``, ``rerank``, ``context_window``,
        ``scope``, ``doc_ids``, ``page_prefix``)."""
        # Resolving reads the stored defaults: off the event loop, like the search itself.
        resolved = await to_thread(lambda: self.resolved(options, **overrides))
        return await self._search(query, resolved.options, resolved)

    def search(self, query: str, options: Options = None, /, **overrides: Any) -> list[Hit]:
        """:meth:`asearch` for synchronous code."""
        request = self.resolved(options, **overrides)
        resolved = request.options
        if not is_synchronous(resolved) or request.store is None:
            return run_sync(self._search(query, resolved, request))
        # Keywords only while the vectors are being computed: no model loaded for it.
        asked, resolved = resolved, while_embedding(request.store, resolved)
        embedder = self._search_embedder(resolved, request.meta)
        with telemetry.operation("search", query, kb=self.name) as op:
            hits = retrieve_sync(request.store, embedder, query, resolved)
            op.set(hits=len(hits), top_k=resolved.top_k, **_search_values(resolved, asked))
        return hits

    def _answer_request(self, options: Options, overrides: Mapping[str, Any]) -> Resolved:
        if isinstance(options, Resolved) and not overrides:
            return options
        # A reply that searches nothing (a greeting) must not need the knowledge base to
        # exist; a search of a missing one still fails (KnowledgeBaseError, from ``store``).
        if not self.exists:
            if isinstance(options, Resolved):
                options = options.options
            return Resolved(SearchOptions().merged(options).merged(overrides))
        return self.resolved(options, **overrides)

    async def _search(
        self, query: str, options: SearchOptions, request: Resolved | None = None
    ) -> list[Hit]:
        if request is not None and request.build is not None:
            # Not built yet (a release): built now, off the event loop, and searched there
            # under the options checked against the built index.
            built = await to_thread(request.build)
            resolved = await to_thread(built.resolved, options)
            return await built._search(query, resolved.options, resolved)
        # ``chat_model``: the request's, else this knowledge base's (resolved), else global.
        model = self.model_for(options.chat_model) if options.needs_model else None
        # The request's store and meta when it was resolved with them: not opened again.
        if request is None or request.store is None:
            store, meta = self.store, None
        else:
            store, meta = request.store, request.meta
        asked, options = options, while_embedding(store, options)
        embedder = self._search_embedder(options, meta)
        with telemetry.operation("search", query, kb=self.name) as op:
            hits = await retrieve(store, embedder, query, options, model=model)
            op.set(hits=len(hits), top_k=options.top_k, **_search_values(options, asked))
        return hits

    def _search_embedder(
        self, options: SearchOptions, meta: Mapping[str, str] | None = None
    ) -> Embedder | None:
        # A full-text search never loads the embedding model.
        if options.search_type == "full_text":
            return None
        if meta is None or self._embedder is not None:
            return self.embedder
        return self.library.embedder(stored_embedder(meta)[0] or self.settings.embedder)

    # -- answer ----------------------------------------------------------------------------

    async def astream(
        self,
        messages: str | Sequence[MessageLikeRepresentation],
        options: Options = None,
        /,
        *,
        workflow: str = DEFAULT_WORKFLOW,
        on_search: OnSearch | None = None,
        **overrides: Any,
    ) -> AsyncIterator[Event]:
        """Answer the conversation's last user message, yielding ``Status``, ``TextDelta``
        and one final ``Done`` event. With a chat model (:attr:`model`) the ``workflow``
        (``citewise-rag`` or ``citewise-agentic``) writes the answer, searching each planned
        query with the resolved options; without one the answer is extractive: the
        passages that best match the last message, quoted and cited. ``options`` may be a
        request resolved already (:meth:`resolved`): it is taken whole."""
        if isinstance(options, Resolved) and not overrides:
            request = options
        else:
            request = await to_thread(self._answer_request, options, overrides)
        retriever = _Retriever(self, on_search, request)
        if (line := await to_thread(self._embedding_status, request)) is not None:
            yield Status(line)
        with telemetry.operation("answer", kb=self.name, model=workflow) as op:
            async for event in astream_answer(
                messages, retriever, self.model, options=request.options, workflow=workflow
            ):
                if isinstance(event, TextDelta) and event.text:
                    op.mark("first_token")
                elif isinstance(event, Done):
                    op.set(citations=len(event.answer.citations), hits=len(event.answer.hits))
                    op.label(kind=event.answer.kind)
                    if (checked := event.answer.verification) is not None:
                        op.set(**verification_counts(checked))
                yield event

    def _embedding_status(self, request: Resolved) -> str | None:
        """The status line while this knowledge base's vectors are being computed (a text
        first index: searched by keywords meanwhile); None once complete, or when the
        request has no store (a knowledge base not built yet)."""
        from citewise.kb import vector_fill

        if request.store is None:
            return None
        return vector_fill.status_line(self, self.name, request.store)

    def stream(
        self,
        messages: str | Sequence[MessageLikeRepresentation],
        options: Options = None,
        /,
        *,
        workflow: str = DEFAULT_WORKFLOW,
        **overrides: Any,
    ) -> Iterator[Event]:
        """:meth:`astream` for synchronous code; closing the iterator cancels the run."""
        request = self._answer_request(options, overrides)
        return iterate_in_thread(lambda: self.astream(messages, request, workflow=workflow))

    async def aask(
        self,
        messages: str | Sequence[MessageLikeRepresentation],
        options: Options = None,
        /,
        *,
        workflow: str = DEFAULT_WORKFLOW,
        on_search: OnSearch | None = None,
        **overrides: Any,
    ) -> Answer:
        """The finished answer of :meth:`astream`."""
        return await afinal_answer(
            self.astream(messages, options, workflow=workflow, on_search=on_search, **overrides)
        )

    def ask(
        self,
        question: str | Sequence[MessageLikeRepresentation],
        options: Options = None,
        /,
        *,
        workflow: str = DEFAULT_WORKFLOW,
        model: BaseChatModel | None = None,
        **overrides: Any,
    ) -> Answer:
        """Answer ``question`` (or a conversation ending with it), citing the sections used.

        ``model`` answers this one question instead of :attr:`model`.
        """
        kb = self if model is None else self.with_model(model)
        return final_answer(kb.stream(question, options, workflow=workflow, **overrides))

    def with_model(self, model: BaseChatModel) -> KnowledgeBase:
        """This knowledge base, answering with ``model`` (same library, same embedder)."""
        kb = KnowledgeBase(self.name, settings=self.settings, library=self.library, model=model)
        kb._embedder = self._embedder
        return kb


class _Retriever:
    """A knowledge base's search under options the workflow passes already resolved."""

    def __init__(self, kb: KnowledgeBase, on_search: OnSearch | None, request: Resolved) -> None:
        self.kb = kb
        self.on_search = on_search
        self.request = request

    async def asearch(self, query: str, options: SearchOptions) -> list[Hit]:
        if self.on_search is not None:
            self.on_search(self.kb.name)
        return await self.kb._search(query, options, self.request)


def _scopes(meta: Mapping[str, str]) -> tuple[str, ...]:
    recorded = meta.get("scopes", "").split()
    return (ALL_SCOPE, *(name for name in recorded if name != ALL_SCOPE))


def _checked(name: str, options: SearchOptions, meta: Mapping[str, str]) -> SearchOptions:
    """``options`` with their names checked against the registries and their scope
    against the knowledge base's (ConfigurationError naming the known ones)."""
    options = check_names(options)
    if options.restricted:
        known = _scopes(meta)
        # An index built before scopes were recorded cannot tell a typo from a scope.
        if len(known) > 1 and options.scope not in known:
            raise ConfigurationError(
                f"unknown scope {options.scope!r} in {name!r}: use one of {', '.join(known)}",
                field="scope",
            )
    return options


def _search_values(options: SearchOptions, asked: SearchOptions | None = None) -> dict[str, float]:
    """What the diagnostics count about a search's options: filtered (1) or not (0), and
    ``keyword_while_embedding`` (1) when it was searched by keywords alone because the
    knowledge base's vectors were still being computed (``asked``: the options before)."""
    values = {"filtered": 1.0 if options.search_filter() is not None else 0.0}
    if asked is not None and asked is not options:
        values["keyword_while_embedding"] = 1.0
    return values


def verification_counts(verification: Verification) -> dict[str, float]:
    """What an answer's grounding check found, as the answer operation's values (the
    server's metrics count them)."""
    return {
        "verified_ok": float(verification.ok),
        "unsupported_tokens": len(verification.unsupported),
        "outside_links": len(verification.outside_links),
        "unsupported_citations": sum(not c.supported for c in verification.citations),
        "attributed_citations": verification.attributed,
        "unsupported_blocks": len(verification.unsupported_blocks),
    }
