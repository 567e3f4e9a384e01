"""The plain values that flow between citewise's stages: sections, chunks, hits, answers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from citewise.options import SearchOptions


@dataclass(frozen=True)
class Section:
    """One heading's worth of a document, as a parser finds it.

    ``page`` is the page's path after the site's version (``how-to-guides/openai-proxies/``,
    ``""`` for the site root); ``url`` is the published page URL plus ``#anchor`` (the bare
    page URL for a page's first h1). ``page_number`` is set for paged formats such as PDF.
    """

    doc_id: str
    title: str
    heading_path: tuple[str, ...]
    level: int
    anchor: str
    url: str
    page: str
    text: str
    scope: str = ""
    page_number: int | None = None
    # What the document says about itself (author, dates…): on its first section only.
    doc_metadata: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Document:
    """A source file as indexed: identity, where it is published and a hash of its content.

    ``metadata``: what its parser found about it (``author``, ``subject``, ``description``,
    ``created``, ``modified``), as sorted ``(key, value)`` pairs.
    """

    doc_id: str
    title: str
    url: str
    page: str
    content_hash: str
    scope: str = ""
    metadata: tuple[tuple[str, str], ...] = ()

    @property
    def metadata_dict(self) -> dict[str, str]:
        return dict(self.metadata)

    def as_json(self) -> dict[str, Any]:
        """The document's fields, its metadata as an object."""
        return {**asdict(self), "metadata": self.metadata_dict}


@dataclass(frozen=True)
class Chunk:
    """One piece of a section, at most ``max_chars`` long, its text prefixed with the heading path.

    ``chunk_id`` hashes the document id, the chunk's position and its content, so an unchanged
    chunk keeps its id (and its stored vectors) across re-indexing.
    """

    chunk_id: str
    doc_id: str
    position: int
    section_index: int
    text: str
    title: str
    heading_path: tuple[str, ...]
    anchor: str
    url: str
    page: str
    scope: str = ""
    page_number: int | None = None


@dataclass(frozen=True)
class ApiUnit:
    """An API-reference entry as a unit: the object's dotted id, its kind and its parent.

    ``kind`` is ``module``, ``class``, ``function`` (methods included), ``attribute`` or
    ``object`` when the entry's text does not say.
    """

    object_id: str
    kind: str
    parent: str

    @property
    def name(self) -> str:
        """The object's own name (the id's last part)."""
        return self.object_id.rpartition(".")[2]


@dataclass(frozen=True)
class Hit:
    """A chunk found by a search, with its fused score and the rankers that found it.

    ``also``: the other chunks of the same section that matched, best first (a collapsed
    search returns each section once, its best chunk as ``chunk``). ``library`` and
    ``library_version``: the knowledge base and version it came from, set by a search of
    several (empty for one).
    """

    chunk: Chunk
    score: float
    rankers: tuple[str, ...]
    also: tuple[Chunk, ...] = ()
    library: str = ""
    library_version: str = ""

    @property
    def url(self) -> str:
        return self.chunk.url

    @property
    def passage(self) -> str:
        """The section's matched text: the hit's chunk and the ``also`` chunks, in document
        order (what an answer may quote: collapsing keeps one hit per section, not less text)."""
        if not self.also:
            return self.chunk.text
        chunks = sorted((self.chunk, *self.also), key=lambda chunk: chunk.position)
        return "\n\n".join(chunk.text for chunk in chunks)

    def as_json(self) -> dict[str, object]:
        """The hit as every interface prints it (CLI ``--json``, REST, MCP)."""
        chunk = self.chunk
        return {
            "url": chunk.url,
            "page": chunk.page,
            "title": chunk.title,
            "heading_path": list(chunk.heading_path),
            "score": round(self.score, 6),
            "rankers": list(self.rankers),
            "text": chunk.text,
            "chunk_id": chunk.chunk_id,
            "doc_id": chunk.doc_id,
            "page_number": chunk.page_number,
            "also_matched": [other.chunk_id for other in self.also],
            **({"library": self.library, "version": self.library_version} if self.library else {}),
        }


@dataclass(frozen=True)
class Citation:
    """An OpenAI ``url_citation`` annotation: a span of the answer text that cites a section."""

    url: str
    title: str
    start_index: int
    end_index: int
    type: str = "url_citation"
    attributed: bool = False
    """True when citewise added it (the model wrote no link for that text): see
    ``citewise.grounding``. Not part of the annotation a client receives."""


@dataclass(frozen=True)
class CitationSupport:
    """How well one citation's section supports the text it is attached to.

    ``score`` is the share of the text's content words found in the section (0 to 1);
    ``supported`` is ``score`` at or over the threshold.
    """

    url: str
    start_index: int
    end_index: int
    score: float
    supported: bool
    attributed: bool = False

    def as_json(self) -> dict[str, object]:
        return {
            "url": self.url,
            "start_index": self.start_index,
            "end_index": self.end_index,
            "score": round(self.score, 3),
            "supported": self.supported,
            "attributed": self.attributed,
        }


@dataclass(frozen=True)
class Problem:
    """One claim of an answer the sections do not support as written.

    ``kind``: ``near_miss`` (a name close to a documented one: ``suggestion`` spells it),
    ``command`` (a command line whose parts the sections never give together), ``package``
    (a package installed with a manager or extras the sections do not show), ``assignment``
    (``NAME=value`` with a value the sections do not give it), ``import`` (a name imported
    from a module the sections do not import it from), ``context`` (a documented command
    offered for what its section does not say), ``contradiction`` (a sentence its section
    says the opposite of), ``list`` (list items a section holds, under a lead-in that
    section does not support), ``diagram`` (list items that are only a diagram's labels),
    ``internal`` (a call offered to the reader that the sections show only as an internal
    API entry or in a description of how things work). ``text``: the answer's words;
    ``detail``: what the sections say instead.
    """

    kind: str
    text: str
    detail: str
    suggestion: str = ""

    def as_json(self) -> dict[str, str]:
        found = {"kind": self.kind, "text": self.text, "detail": self.detail}
        return found | ({"suggestion": self.suggestion} if self.suggestion else {})


@dataclass(frozen=True)
class Verification:
    """What the deterministic check found in one answer (``citewise.grounding.verify``).

    ``unsupported``: identifier-like tokens (inline code, environment variables, dotted
    paths, CLI flags and commands, URLs, function and class names) found in neither the
    retrieved sections nor the conversation. ``outside_links``: links that point at no
    retrieved section. ``citations``: each citation's support. ``attributed``: citations
    citewise added itself. ``unsupported_blocks``: paragraphs, list items or code blocks
    no retrieved section supports (their first words). ``problems``: claims the sections
    do not support as written (:class:`Problem`). ``mode`` is the ``verify`` option
    it ran under; ``regenerated`` says the answer was written again once.
    """

    unsupported: tuple[str, ...] = ()
    outside_links: tuple[str, ...] = ()
    citations: tuple[CitationSupport, ...] = ()
    attributed: int = 0
    unsupported_blocks: tuple[str, ...] = ()
    mode: str = "report"
    regenerated: bool = False
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        """No unsupported token, outside link, unsupported block or problem, and every
        citation supported."""
        return (
            not self.unsupported
            and not self.outside_links
            and not self.unsupported_blocks
            and not self.problems
            and all(c.supported for c in self.citations)
        )

    def as_json(self) -> dict[str, object]:
        """The verification as every door reports it."""
        return {
            "ok": self.ok,
            "mode": self.mode,
            "unsupported": list(self.unsupported),
            "outside_links": list(self.outside_links),
            "citations": [c.as_json() for c in self.citations],
            "attributed": self.attributed,
            "unsupported_blocks": list(self.unsupported_blocks),
            "problems": [p.as_json() for p in self.problems],
            "regenerated": self.regenerated,
        }


@dataclass(frozen=True)
class Answer:
    """An answer with its citations and the hits it was written from.

    ``kind`` says how it was written: ``extractive`` (quoted passages, no chat model) or
    ``generated`` (a chat model). ``verification`` is what the grounding check found (set
    by the workflow on every answer unless the ``verify`` option is ``off``).
    """

    text: str
    citations: tuple[Citation, ...]
    hits: tuple[Hit, ...]
    kind: str = "extractive"
    queries: tuple[str, ...] = field(default_factory=tuple)
    verification: Verification | None = None


@dataclass(frozen=True)
class SearchFilter:
    """Restricts a search to part of a knowledge base; ``None`` fields do not filter.

    ``scope`` matches a chunk whose scope is a space-separated list containing it (a chunk of
    ``tutorials/`` may be in ``tutorials library``), or equals it exactly; ``page_prefix``
    matches the start of its page path.
    """

    scope: str | None = None
    page_prefix: str | None = None
    doc_ids: tuple[str, ...] | None = None


class Retriever(Protocol):
    """What the answer workflows search: one knowledge base, under fully resolved options."""

    async def asearch(self, query: str, options: SearchOptions) -> list[Hit]: ...
