"""Several knowledge bases answering as one: each question routed to its libraries, each
library searched under its own defaults, the hits interleaved by rank and labelled with
their library and version."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from citewise.answering import DEFAULT_WORKFLOW, Event, Status, astream_answer
from citewise.asyncbridge import iterate_in_thread, run_sync
from citewise.errors import KnowledgeBaseError
from citewise.kb import vector_fill
from citewise.kb.catalog import Card, card_of
from citewise.kb.config import KBConfig
from citewise.kb.knowledge_base import KnowledgeBase, Options
from citewise.kb.pending import PendingLibrary, build, pending
from citewise.kb.request import Resolved
from citewise.kb.routing import NEAREST, Route, route
from citewise.models import Hit
from citewise.options import ALL_SCOPE, OPTION_NAMES, SearchOptions, parse_options

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import MessageLikeRepresentation

    from citewise.kb.knowledge_base import OnSearch
    from citewise.kb.library import Library

__all__ = ["ALL", "KnowledgeBases", "interleave", "labelled"]

# The name a request uses for every knowledge base of the store.
ALL = "all"


def labelled(hit: Hit, card: Card) -> Hit:
    """``hit`` marked as ``card``'s: its library and version, and its heading path led by
    them, so an extractive answer and a citation's title say where the section is from."""
    chunk = hit.chunk
    path = chunk.heading_path or (chunk.title,)
    chunk = replace(chunk, heading_path=(card.label, *path))
    return replace(hit, chunk=chunk, library=card.name, library_version=card.version)


def interleave(rankings: Sequence[Sequence[Hit]], limit: int) -> list[Hit]:
    """The first hit of each ranking, then the second of each…, at most ``limit``."""
    merged: list[Hit] = []
    for rank in range(max((len(r) for r in rankings), default=0)):
        merged += [ranking[rank] for ranking in rankings if rank < len(ranking)]
    return merged[:limit]


def _changed(options: SearchOptions, base: SearchOptions) -> dict[str, Any]:
    """The fields the workflow set on ``options`` over the request's ``base``."""
    return {
        name: getattr(options, name)
        for name in OPTION_NAMES
        if getattr(options, name) != getattr(base, name)
    }


class KnowledgeBases(KnowledgeBase):
    """Knowledge bases of one library answering as one (``names`` None: every one).

    It answers wherever a :class:`KnowledgeBase` does (``asearch``, ``astream``, ``aask``,
    ``section``…); the search options a request gives override each library's own defaults.
    """

    def __init__(
        self, library: Library, names: Sequence[str] | None = None, *,
        model: BaseChatModel | None = None,
    ) -> None:  # fmt: skip
        super().__init__(ALL if names is None else "+".join(names), library=library, model=model)
        self._names = tuple(names) if names is not None else None

    # -- what it is ------------------------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        """The libraries answering: indexed ones, then those indexed on first use."""
        names = [*self.library.names(), *sorted(pending(self.library))]
        if self._names is None:
            return tuple(names)
        unknown = [name for name in self._names if name not in names]
        if unknown:
            raise KnowledgeBaseError(
                f"unknown knowledge base {unknown[0]!r} (known: {', '.join(names) or 'none'})"
            )
        return self._names

    @property
    def members(self) -> list[KnowledgeBase]:
        """The indexed libraries (those indexed on first use are not yet)."""
        return [self.library.open(name) for name in self.names if name in self.library.names()]

    def cards(self) -> list[Card]:
        waiting = pending(self.library)
        return [
            _pending_card(waiting[name]) if name in waiting else card_of(self.library.open(name))
            for name in self.names
        ]

    def _open(self, name: str) -> KnowledgeBase:
        """Library ``name``, indexed now if it waited for its first question."""
        if name in self.library.names():
            kb = self.library.open(name)
            # Text written, vectors not all there (a restart after an interrupted fill).
            vector_fill.start(kb)
            return kb
        return build(self.library, name)

    @property
    def exists(self) -> bool:
        return bool(self.library.names())

    def require(self) -> None:
        if not self.names:
            raise KnowledgeBaseError("no knowledge base yet: index one (citewise index DIR)")

    def meta(self) -> dict[str, str]:
        return {}

    @property
    def config(self) -> KBConfig:
        return KBConfig(embedder=self.settings.embedder)

    @property
    def scopes(self) -> tuple[str, ...]:
        return (ALL_SCOPE,)

    def documents(self) -> list[Any]:
        return []  # uploads are published per knowledge base

    def resolve(self, options: Options = None, /, **overrides: Any) -> SearchOptions:
        """The request's options over the built-in defaults; each library's own defaults
        apply under them when it is searched."""
        if isinstance(options, Resolved):
            options = options.options
        return SearchOptions().merged(options).merged(overrides)

    def resolved(self, options: Options = None, /, **overrides: Any) -> Resolved:
        """The request's own options, resolved once: no store of its own to open (each
        library's is opened, and its defaults applied, when it is searched)."""
        return Resolved(_request(options, overrides))

    def section(self, url: str, *, readable: bool = False) -> str | None:
        for kb in self.members:
            text = kb.section(url, readable=readable)
            if text is not None:
                return text
        return None

    # -- routing and search ----------------------------------------------------------------

    def _nearest(self, name: str, question: str) -> float:
        """A library's score for ``question``: the mean cosine of its nearest chunks."""
        from citewise.retrieval.hybrid import search

        if name not in self.library.names():
            return 0.0  # not indexed yet: chosen only when a question names it
        kb = self.library.open(name)
        hits = search(kb.store, kb.embedder, question, k=NEAREST, mode="vector")
        return sum(hit.score for hit in hits) / NEAREST

    def route(self, question: str, libraries: Sequence[str] | None = None) -> Route:
        """Where ``question`` goes (``libraries``: named by the request or the plan)."""
        if libraries:
            known = self.names
            unknown = [name for name in libraries if name not in known]
            if unknown:
                raise KnowledgeBaseError(
                    f"unknown library {unknown[0]!r} (known: {', '.join(known) or 'none'})"
                )
            return Route(tuple(libraries), "asked")
        return route(question, self.cards(), self._nearest)

    async def _search_routed(
        self, query: str, names: Sequence[str], options: SearchOptions, request: SearchOptions
    ) -> list[Hit]:
        """``query`` searched in each of ``names`` under its defaults, overridden by the
        ``request``'s options and by what the workflow changed in ``options``."""
        changed = _changed(options, self.resolve(request))
        cards = {card.name: card for card in await asyncio.to_thread(self.cards)}

        async def one(name: str) -> list[Hit]:
            kb = await asyncio.to_thread(self._open, name)
            resolved = await asyncio.to_thread(self._resolve_in, kb, request, changed)
            return [labelled(hit, cards[name]) for hit in await kb._search(query, resolved)]

        rankings = await asyncio.gather(*(one(name) for name in names))
        # As many as the longest ranking, and never fewer than one hit per library.
        longest = max((len(ranking) for ranking in rankings), default=0)
        return interleave(rankings, max(longest, sum(bool(ranking) for ranking in rankings)))

    @staticmethod
    def _resolve_in(
        kb: KnowledgeBase, request: SearchOptions, changed: Mapping[str, Any]
    ) -> SearchOptions:
        values = request.given_values()
        if request.restricted and request.scope not in kb.scopes:
            values.pop("scope", None)  # a scope one library has limits only that one
        return kb.config.defaults.merged(values).merged(dict(changed))

    async def asearch(
        self,
        query: str,
        options: Options = None,
        /,
        *,
        libraries: Sequence[str] | None = None,
        **overrides: Any,
    ) -> list[Hit]:
        """The best sections for ``query`` from the libraries it is routed to (or
        ``libraries``), interleaved by rank."""
        base = _request(options, overrides)
        found = await asyncio.to_thread(self.route, query, libraries)
        return await self._search_routed(query, found.names, self.resolve(base), base)

    def search(self, query: str, options: Options = None, /, **overrides: Any) -> list[Hit]:
        return run_sync(self.asearch(query, options, **overrides))

    async def _search(
        self, query: str, options: SearchOptions, request: Resolved | None = None
    ) -> list[Hit]:
        found = await asyncio.to_thread(self.route, query)
        return await self._search_routed(query, found.names, options, options)

    # -- answer ----------------------------------------------------------------------------

    async def astream(
        self,
        messages: str | Sequence[MessageLikeRepresentation],
        options: Options = None,
        /,
        *,
        workflow: str = DEFAULT_WORKFLOW,
        on_search: OnSearch | None = None,
        libraries: Sequence[str] | None = None,
        **overrides: Any,
    ) -> AsyncIterator[Event]:
        """Answer as :meth:`KnowledgeBase.astream`, from the libraries the last user
        message is routed to (a status line names them with their versions)."""
        from citewise.answering import conversation

        base = _request(options, overrides)
        question = str(conversation(messages)[-1].text)
        found = await asyncio.to_thread(self.route, question, libraries)
        cards = {card.name: card for card in await asyncio.to_thread(self.cards)}
        labels = ", ".join(cards[name].label for name in found.names)
        for name in found.names:
            if cards[name].description == _PENDING.format(card=cards[name]):
                async for status in self._first_use(cards[name]):
                    yield status
            if (
                line := await asyncio.to_thread(self._library_embedding_status, cards[name])
            ) is not None:
                yield line
        yield Status(f"Searching {labels} ({_HOW.get(found.how, found.how)})")
        retriever = _Routed(self, found.names, base, on_search)
        if found.how == "nearest":  # the rules' guess: a chat model's plan may name others
            retriever.catalog = "\n".join(
                f"{card.name}: {card.label}: {card.description[:160]}" for card in cards.values()
            )
        model = await asyncio.to_thread(lambda: self.model)
        async for event in astream_answer(
            messages, retriever, model, options=self.resolve(base), workflow=workflow
        ):
            yield event

    async def _first_use(self, card: Card) -> AsyncIterator[Status]:
        """Index a library on the first question that needs it, saying so with progress."""
        yield Status(f"Indexing {card.label}: the first question about it")
        done: list[tuple[int, int]] = []
        task = asyncio.create_task(
            asyncio.to_thread(
                build, self.library, card.name, lambda n, total, _: done.append((n, total))
            )
        )
        shown = 0
        while not task.done():
            await asyncio.wait({task}, timeout=0.5)
            if len(done) > shown:
                shown = len(done)
                yield Status(f"Indexing {card.label}: {done[-1][0]} of {done[-1][1]} files")
        task.result()
        yield Status(f"Indexed {card.label}")

    def _library_embedding_status(self, card: Card) -> Status | None:
        """A status line while library ``card``'s vectors are being computed (its searches
        are keyword-only meanwhile), or once that stopped on an error; None when hybrid."""
        if card.name not in self.library.names():
            return None
        line = vector_fill.status_line(self.library.open(card.name), card.label)
        return Status(line) if line is not None else None

    def stream(
        self,
        messages: str | Sequence[MessageLikeRepresentation],
        options: Options = None,
        /,
        *,
        workflow: str = DEFAULT_WORKFLOW,
        **overrides: Any,
    ) -> Iterator[Event]:
        return iterate_in_thread(
            lambda: self.astream(messages, options, workflow=workflow, **overrides)
        )

    def with_model(self, model: BaseChatModel) -> KnowledgeBase:
        return KnowledgeBases(self.library, self._names, model=model)


_PENDING = "{card.label}: indexed on the first question about it"


def _pending_card(item: PendingLibrary) -> Card:
    card = Card(item.kb, item.package, item.version, aliases=(item.kb, item.package))
    return replace(card, description=_PENDING.format(card=card))


_HOW = {"named": "named in the question", "nearest": "nearest to the question",
        "asked": "as asked", "only": "the only library"}  # fmt: skip


def _request(options: Options, overrides: Mapping[str, Any]) -> SearchOptions:
    """The request's own options (only the fields it set count as set)."""
    if isinstance(options, Resolved):  # made by :meth:`KnowledgeBases.resolved`
        options = options.options
    values: dict[str, Any] = {}
    if isinstance(options, SearchOptions):
        values.update(options.given_values())
    elif options:
        values.update({k: v for k, v in options.items() if v is not None})
    values.update({k: v for k, v in overrides.items() if v is not None})
    return parse_options(values)


class _Routed:
    """The retriever of a routed answer: each planned query searched in its libraries."""

    def __init__(
        self, kbs: KnowledgeBases, names: Sequence[str], base: SearchOptions,
        on_search: OnSearch | None,
    ) -> None:  # fmt: skip
        self.kbs, self.base, self.on_search = kbs, base, on_search
        self.names = tuple(names)
        self.catalog = ""  # the libraries a plan may choose among (none: no choice)

    def choose(self, libraries: Sequence[str]) -> None:
        """Search the libraries the plan named instead (those that are known)."""
        from citewise.kb.catalog import normalized

        cards = self.kbs.cards()
        spellings = {
            card.name: {normalized(a) for a in (card.name, *card.aliases)} for card in cards
        }
        wanted = [normalized(name) for name in libraries]
        chosen = [name for want in wanted for name, known in spellings.items() if want in known]
        if chosen:
            self.names = tuple(dict.fromkeys(chosen))

    async def asearch(self, query: str, options: SearchOptions) -> list[Hit]:
        if self.on_search is not None:
            for name in self.names:
                self.on_search(name)
        return await self.kbs._search_routed(query, self.names, options, self.base)
