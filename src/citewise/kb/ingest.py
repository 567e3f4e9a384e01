"""The one ingest pipeline: items (a folder's files, uploads, a release, parsed sections) →
parse → chunk → embed only what changed → one atomic write."""

from __future__ import annotations

import gc
import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from citewise import telemetry
from citewise.chunking import NO_OVERLAP, Overlap, chunk_sections
from citewise.config import ParseSettings
from citewise.embedding.base import Embedder, Vectors
from citewise.embedding.windows import windows_for_many
from citewise.errors import CitewiseError, EmbeddingError, KnowledgeBaseError, SourceError
from citewise.kb.config import META_EMBEDDER_MODEL, stored_embedder
from citewise.models import Chunk, Document, Section
from citewise.parsing.base import binary_suffixes, supported_suffixes
from citewise.parsing.layout import MKDOCS_LAYOUT, SiteLayout
from citewise.parsing.mkdocstrings import ApiReference
from citewise.parsing.mkdocstrings import has_directives as has_api_directives
from citewise.parsing.preparsed import ParsedDocument, parsed_sections
from citewise.parsing.slots import ParseSlots, parse_slot_count
from citewise.parsing.source import parse_file
from citewise.sources import SourceFile, read_folder
from citewise.sources.includes import expand_includes
from citewise.sources.layout import DocsTree, docs_tree
from citewise.sources.scopes import ScopeOf, folder_scopes
from citewise.sources.upload import upload_source
from citewise.store.base import DocumentUpdate, KBStore, VectorsLater, vectors_missing

__all__ = [
    "IndexReport",
    "IngestItem",
    "Progress",
    "WindowsOf",
    "embed_chunks",
    "fingerprint",
    "folder_items",
    "ingest",
    "parse_folder",
    "parsed_items",
    "section_items",
    "source_from_bytes",
    "upload_items",
]

# Called after each embedding batch with (windows embedded, windows to embed, last doc id).
Progress = Callable[[int, int, str], None]
# The texts to embed for each chunk (its vectors all point at it); default: embedding windows.
# Index strategies (citewise.strategies) supply others: small child windows, questions.
WindowsOf = Callable[[Sequence[Chunk]], list[list[str]]]
# Fresh chunks embedded together: large batches keep the model busy, and the embedding
# cache fills batch by batch, so an interrupted run resumes where it stopped.
EMBED_BATCH_CHUNKS = 256


@dataclass
class IndexReport:
    """What an ingest run did."""

    kb: str
    files: int = 0
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    chunks: int = 0
    chunks_embedded: int = 0
    windows_embedded: int = 0
    # Chunks written without vectors (``vectors_later``): embedded afterwards (kb/vector_fill.py).
    vectors_missing: int = 0
    seconds: float = 0.0
    # Chunks stored with less than their strategy asked for (a failed question generation).
    failures: list[str] = field(default_factory=list)
    # Files of the folder not indexed, each with the reason (no parser for its format…).
    skipped: dict[str, str] = field(default_factory=dict)
    # A crawl's bounds that were hit (setting → what it cut) and its counts (requests…).
    limits: dict[str, str] = field(default_factory=dict)
    crawl: dict[str, str | int | float | bool] = field(default_factory=dict)

    def summary(self) -> str:
        skipped = f", {len(self.skipped)} skipped" if self.skipped else ""
        what = "pages" if self.crawl else "files"
        line = (
            f"{self.kb}: {self.files} {what} ({len(self.added)} added, {len(self.updated)} "
            f"updated, {len(self.unchanged)} unchanged, {len(self.removed)} removed{skipped}), "
            f"{self.chunks} chunks, {self.chunks_embedded} embedded, {self.seconds:.1f}s"
        )
        if self.crawl:
            line += (f"; {self.crawl.get('requests', 0)} requests, "
                     f"{self.crawl.get('not_modified', 0)} not modified")  # fmt: skip
        for what_it_cut in self.limits.values():
            line += f"\nlimit hit: {what_it_cut}"
        return line


@dataclass(frozen=True)
class IngestItem:
    """One document to ingest: its id, a fingerprint of everything that shapes its chunks,
    and how to get its sections (called only when the fingerprint changed).

    ``parses``: whether getting its sections parses (a file, an external parser's output),
    so that its parse + chunk job takes one of the installation's parse slots; sections
    given as they are (:func:`section_items`) are not parsed and take none."""

    doc_id: str
    fingerprint: str
    sections: Callable[[], list[Section]]
    label: str = ""  # how errors name it (a path), the doc id when empty
    scope: str = ""
    parses: bool = True


def fingerprint(data: bytes, shape: Mapping[str, str]) -> str:
    """Changes when the content or anything that shapes its chunks (site URL, size…) does."""
    digest = hashlib.sha256(data)
    for key in sorted(shape):
        digest.update(f"\0{key}={shape[key]}".encode())
    return digest.hexdigest()


def folder_items(
    folder: Path,
    *,
    site_url: str = "",
    version: str | None = None,
    max_chars: int,
    overlap: Overlap = NO_OVERLAP,
    scopes: ScopeOf | None = None,
    api: ApiReference | None = None,
    skipped: dict[str, str] | None = None,
    tree: DocsTree | None = None,
    parse_settings: ParseSettings | None = None,
) -> list[IngestItem]:
    """Every page of the site built from ``folder`` as an item, with its scopes.

    What is a page, where page paths start and their URL form come from ``tree`` (default:
    read from the folder's site config, :func:`citewise.sources.layout.docs_tree`); included
    files are part of the including page (and of its fingerprint). Pages with API directives
    (mkdocstrings ``:::``, Sphinx ``auto*``) are expanded from ``api``'s source; every other
    file found is named in ``skipped`` with the reason, as is an include that cannot be read.
    Files are read and parsed within ``parse_settings`` (default: read from the environment
    now), their size limits included.
    """
    parse_settings = parse_settings or ParseSettings.from_env()
    tree = tree or docs_tree(folder)
    scope_of = scopes or folder_scopes(folder)
    shape = {"site_url": site_url, "version": version or "", "max_chars": str(max_chars)}
    shape.update(_overlap_shape(overlap))
    if tree.layout.to_meta() != MKDOCS_LAYOUT.to_meta():
        # Fingerprints made before layouts existed (MkDocs folders) stay valid.
        shape["layout"] = tree.layout.to_meta()
    items = []
    api_print: list[str] = []
    for source in _read_docs(folder, tree, skipped, parse_settings):
        scope = scope_of(source.doc_id)
        # The scope is part of the fingerprint so a changed nav rewrites the chunks' scopes
        # (their ids, and so their vectors, stay: nothing is re-embedded).
        extra = {"scope": scope}
        uses_api = api is not None and not source.binary and has_api_directives(source.text)
        if uses_api and api is not None:
            api_print = api_print or [api.fingerprint()]
            extra["api"] = api_print[0]
        items.append(
            _source_item(source, fingerprint(source.data, {**shape, **extra}), scope,
                         site_url=site_url, version=version, api=api if uses_api else None,
                         problems=skipped, layout=tree.layout, settings=parse_settings)
        )  # fmt: skip
    return items


def _read_docs(
    folder: Path, tree: DocsTree, skipped: dict[str, str] | None, settings: ParseSettings
) -> list[SourceFile]:
    """The site's pages under ``folder``, includes expanded; the other files are named in
    ``skipped`` with why.

    A Sphinx folder is read as Sphinx reads it: its source suffixes (``.rst``, ``.md`` with
    MyST) under the folder of its ``conf.py``, never its templates, static files, excluded
    patterns or build output; an MkDocs one without its theme templates and excluded docs.
    """
    suffixes = supported_suffixes()
    wanted = suffixes if tree.suffixes is None else suffixes & tree.suffixes
    refused: dict[str, str] = {}
    problems: dict[str, str] = {}
    sources = [
        expand_includes(source, tree, problems, settings.limits)
        for source in read_folder(tree.source_dir, wanted, binary=binary_suffixes(),
                                  refused=refused, keep=tree.is_page, limits=settings.limits)
    ]  # fmt: skip
    if skipped is not None:
        inner = _prefix(tree.source_dir, folder)
        skipped.update({inner + doc_id: why for doc_id, why in refused.items()})
        skipped.update(problems)
        read = {inner + source.doc_id for source in sources} | set(skipped)
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if any(part.startswith(".") for part in relative.parts) or not path.is_file():
                continue
            doc_id = relative.as_posix()
            if doc_id in read or relative.parts[0] in _BUILD_DIRS:
                continue
            suffix = path.suffix.lower()
            if suffix not in suffixes:
                skipped[doc_id] = f"no parser for {suffix or 'files without a suffix'}"
            elif inner and not doc_id.startswith(inner):
                skipped[doc_id] = f"outside the site's source folder ({inner.rstrip('/')})"
            else:
                skipped[doc_id] = tree.why_not_page(doc_id[len(inner) :])
    return sources


def _prefix(source_dir: Path, folder: Path) -> str:
    """``source_dir``'s path inside ``folder`` with a trailing ``/`` (``""`` when the same)."""
    try:
        inner = source_dir.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return ""
    return "" if inner == "." else f"{inner}/"


# Build output beside the sources (as folder.read_folder skips it): not skipped docs.
_BUILD_DIRS = frozenset({"node_modules", "__pycache__", "site", "public", "_site", "_build"})


def upload_items(
    sources: Sequence[SourceFile],
    *,
    scope: str,
    max_chars: int,
    overlap: Overlap = NO_OVERLAP,
    parse_settings: ParseSettings | None = None,
) -> list[IngestItem]:
    """Uploaded files as items (their names must be distinct), parsed within
    ``parse_settings`` (default: read from the environment now)."""
    parse_settings = parse_settings or ParseSettings.from_env()
    names = [source.doc_id for source in sources]
    if len(set(names)) != len(names):
        raise SourceError(f"the same document name appears twice: {sorted(names)}")
    shape = {"max_chars": str(max_chars), "scope": scope, "upload": "1"}
    shape.update(_overlap_shape(overlap))
    return [
        _source_item(s, fingerprint(s.data, shape), scope, settings=parse_settings) for s in sources
    ]


def section_items(documents: Mapping[str, Sequence[Section]]) -> list[IngestItem]:
    """Documents already parsed into sections (a benchmark corpus, another tool's parser)."""
    items = []
    for doc_id, sections in documents.items():
        data = "\0".join(f"{s.url}\0{'/'.join(s.heading_path)}\0{s.text}" for s in sections)
        items.append(
            IngestItem(doc_id, fingerprint(data.encode(), {}), _given(sections), parses=False)
        )
    return items


def parsed_items(
    documents: Sequence[ParsedDocument],
    *,
    scope: str,
    max_chars: int,
    parse_settings: ParseSettings | None = None,
) -> list[IngestItem]:
    """Documents an external parser already parsed (see :mod:`citewise.parsing.preparsed`),
    held to the section and text limits of ``parse_settings`` (default: read from the
    environment now)."""
    limits = (parse_settings or ParseSettings.from_env()).limits
    shape = {"max_chars": str(max_chars), "scope": scope, "parsed": "1"}
    items = []
    for document in documents:
        data = document.model_dump_json().encode()

        def sections(document: ParsedDocument = document) -> list[Section]:
            return parsed_sections(document, scope=scope, limits=limits)

        items.append(IngestItem(document.id, fingerprint(data, shape), sections, scope=scope))
    return items


def _given(sections: Sequence[Section]) -> Callable[[], list[Section]]:
    return lambda: list(sections)


def _source_item(
    source: SourceFile,
    print_: str,
    scope: str,
    *,
    site_url: str = "",
    version: str | None = None,
    api: ApiReference | None = None,
    problems: dict[str, str] | None = None,
    layout: SiteLayout | None = None,
    settings: ParseSettings,
) -> IngestItem:
    def sections() -> list[Section]:
        found = parse_file(source, site_url=site_url, version=version, scope=scope,
                           layout=layout, settings=settings)  # fmt: skip
        return api.expand(found, problems) if api is not None else found

    return IngestItem(source.doc_id, print_, sections, str(source.path), scope)


def source_from_bytes(name: str, data: bytes) -> SourceFile:
    """An uploaded file as a source; its suffix must name a supported format."""
    return upload_source(name, data, known=supported_suffixes(), binary=binary_suffixes())


def parse_folder(
    folder: Path,
    *,
    site_url: str = "",
    version: str | None = None,
    scopes: ScopeOf | None = None,
    api: ApiReference | None = None,
    page_form: str | None = None,
    parse_settings: ParseSettings | None = None,
) -> list[Section]:
    """Every section of every page of the site built from ``folder``, in path order (API
    directives expanded from ``api``'s source when given). ``page_form`` (``dirhtml`` or
    ``html``) overrides the page URL form the site's configuration gives; files are read
    and parsed within ``parse_settings`` (default: read from the environment now)."""
    tree = docs_tree(folder, page_form)
    items = folder_items(
        folder, site_url=site_url, version=version, max_chars=0, scopes=scopes, api=api,
        tree=tree, parse_settings=parse_settings,
    )  # fmt: skip
    return [section for item in items for section in item.sections()]


def embed_chunks(
    embedder: Embedder, chunks: Sequence[Chunk], windows_of: WindowsOf | None = None
) -> tuple[dict[str, Vectors], int]:
    """Vectors for each chunk, one row per embedding window; also the number of windows."""
    if windows_of is None:
        windows = windows_for_many(embedder, [chunk.text for chunk in chunks])
    else:
        windows = windows_of(chunks) if chunks else []
    flat = [text for chunk_windows in windows for text in chunk_windows]
    if not flat:
        return {}, 0
    matrix = np.asarray(embedder.embed_documents(flat), dtype=np.float32)
    vectors: dict[str, Vectors] = {}
    row = 0
    for chunk, chunk_windows in zip(chunks, windows, strict=True):
        vectors[chunk.chunk_id] = matrix[row : row + len(chunk_windows)]
        row += len(chunk_windows)
    return vectors, len(flat)


@dataclass
class _Pending:
    """A changed document, chunked, waiting for its fresh chunks' vectors."""

    item: IngestItem
    document: Document
    chunks: list[Chunk]
    fresh: list[Chunk]


def ingest(
    handle: KBStore | None,
    create: Callable[[], AbstractContextManager[KBStore]],
    embedder: Embedder,
    items: Sequence[IngestItem],
    *,
    max_chars: int,
    overlap: Overlap = NO_OVERLAP,
    remove_missing: bool,
    meta: Mapping[str, str],
    windows_of: WindowsOf | None = None,
    progress: Progress | None = None,
    name: str = "",
    home: Path | None = None,
    vectors_later: bool = False,
) -> IndexReport:
    """Bring a knowledge base (``handle``; None when it does not exist yet) in line with
    ``items``, then return what changed.

    Unchanged items (same fingerprint) are skipped; changed ones re-embed only chunks whose
    ids are not stored. With ``remove_missing``, stored documents absent from ``items`` are
    deleted (a folder re-index); else they stay (uploads). Nothing is written until every
    item is parsed and embedded; then one transaction applies the change with ``meta``, so a
    failure leaves it as it was. Without a ``handle``, ``create`` gives the new knowledge
    base to write, switched in whole when its block ends (``Store.rebuild``).
    The caller holds the knowledge base's write lock. The ``scopes`` meta key lists the
    scopes in use. ``home`` (the installation's) bounds the parse + chunk jobs of every
    process on it together (see :class:`citewise.parsing.slots.ParseSlots`).

    With ``vectors_later`` (and a store that can hold chunks before their vectors,
    :class:`~citewise.store.base.VectorsLater`) nothing is embedded: the chunks are
    written with their text only, searchable by keywords at once, and
    :func:`citewise.kb.vector_fill.embed_missing` embeds them afterwards (the report's
    ``vectors_missing``). Any other store is embedded first, as without it. Chunks left
    without vectors by an interrupted run are embedded by the next ingest.
    """
    # The objects alive before the build, then its parsed chunks, are kept out of the cyclic
    # garbage collector's scans until it ends (see _GenerationsFrozen).
    with _GenerationsFrozen() as frozen:
        started = time.perf_counter()
        stored_meta = handle.meta() if handle is not None else {}
        _, stored_model = stored_embedder(stored_meta)
        if stored_model and stored_model != embedder.model_id:
            raise KnowledgeBaseError(
                f"knowledge base {name!r} was embedded with {stored_model}, not "
                f"{embedder.model_id}: re-create it (citewise index --rebuild)"
            )
        stored = {doc.doc_id: doc for doc in handle.documents()} if handle is not None else {}
        known_chunks = handle.chunk_ids() if handle is not None else set()
        report = IndexReport(kb=name, files=len(items))
        pending: list[_Pending] = []
        # Resolved once per ingest, not per item (it reads the environment each time).
        slots = _parse_slots(home)
        for item in items:
            previous = stored.get(item.doc_id)
            if previous is not None and previous.content_hash == item.fingerprint:
                report.unchanged.append(item.doc_id)
                continue
            pending.append(_chunked(item, max_chars, overlap, known_chunks, slots))
            (report.updated if previous else report.added).append(item.doc_id)
        # The chunks live until the write ends: scanning them again is wasted too.
        frozen.again()
        present = {item.doc_id for item in items}
        if remove_missing:
            report.removed = sorted(doc_id for doc_id in stored if doc_id not in present)
        names = set(stored_meta.get("scopes", "").split()) if not remove_missing else set()
        names.update(scope for item in items for scope in item.scope.split())
        new_meta = {
            META_EMBEDDER_MODEL: embedder.model_id,
            "indexed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "scopes": " ".join(sorted(names)),
            **meta,
        }

        def write(target: KBStore) -> None:
            if vectors_later and isinstance(target, VectorsLater):
                with telemetry.stage("store"):
                    target.apply(_text_only(pending), report.removed, new_meta, vectors_later=True)
                report.vectors_missing = target.vectors_missing()
            else:
                updates = _embedded(pending, embedder, windows_of, report, progress)
                with telemetry.stage("store"):
                    target.apply(updates, report.removed, meta=new_meta)
            report.chunks = len(target.chunk_ids())

        if handle is not None:
            write(handle)
            if vectors_missing(handle) and not vectors_later:  # an interrupted run's leftovers
                from citewise.kb.vector_fill import embed_missing

                report.chunks_embedded += embed_missing(
                    handle, lambda chunks: embed_chunks(embedder, chunks, windows_of)[0]
                )
        elif vectors_later:
            with create() as target:  # whole, as below: the vectors are filled in afterwards
                write(target)
        else:
            updates = _embedded(pending, embedder, windows_of, report, progress)
            with telemetry.stage("store"):
                # Built beside whatever is there and switched in whole: a failure or a kill
                # leaves nothing half-made.
                with create() as target:
                    target.apply(updates, report.removed, meta=new_meta)
                # A new knowledge base holds what was written, no more: not read back.
                report.chunks = len({c.chunk_id for u in updates for c in u.chunks})
        report.seconds = time.perf_counter() - started
        return report


class _GenerationsFrozen:
    """Freezes the objects alive now (``gc.freeze``) for a ``with`` block, so the collector's
    scans during the build cover only what the build allocates; ``again`` freezes those made
    since. They are unfrozen when the block ends, whatever happened.

    A build keeps what it parsed alive until its write ends, and its allocations (chunks,
    windows, rows) trigger collections that scanned every live object of the process each
    time: SciFact's build from cached vectors spent 50 ms of its 0.9 s of CPU in them (a
    full collection during the write was 36 ms of it; 8 ms with the older objects frozen).
    Only objects' cycles wait for the collector: what a frozen object held alone is freed
    when the last reference goes, as always; frozen garbage cycles are collected after the
    block. Nothing is done when the collector is off or when something else (a server that
    forks workers) froze objects: unfreezing would undo its freeze.
    """

    def __init__(self) -> None:
        self.active = False

    def __enter__(self) -> _GenerationsFrozen:
        self.active = gc.isenabled() and gc.get_freeze_count() == 0
        if self.active:
            gc.freeze()
        return self

    def again(self) -> None:
        if self.active:
            gc.freeze()

    def __exit__(self, *exc_info: object) -> None:
        if self.active:
            gc.unfreeze()


def _text_only(pending: Sequence[_Pending]) -> list[DocumentUpdate]:
    """Each pending document's update without vectors (they are filled in later)."""
    return [DocumentUpdate(one.document, one.chunks, {}) for one in pending]


def _parse_slots(home: Path | None) -> ParseSlots:
    """The installation's parse slots (``CITEWISE_PARSE_CONCURRENCY``, default 2): many
    simultaneous uploads, in one process or several on the same home, queue instead of
    each taking a core and memory. Without a home, the bound is per process."""
    with _PARSING_LOCK:
        # Resolved once per home: an ingest asks for every item (a path walk each).
        key = _RESOLVED.get(home) if home is not None else None
        if home is not None and key is None:
            key = _RESOLVED[home] = home.expanduser().resolve()
        slots = _PARSING.get(key)
        if slots is None or slots.count != parse_slot_count():
            folder = key / ".parse-slots" if key is not None else None
            slots = _PARSING[key] = ParseSlots(parse_slot_count(), folder)
        return slots


_PARSING: dict[Path | None, ParseSlots] = {}
_RESOLVED: dict[Path, Path] = {}
_PARSING_LOCK = threading.Lock()


def _overlap_shape(overlap: Overlap) -> dict[str, str]:
    """The overlap's part of a fingerprint: none without one, so fingerprints made before
    overlaps existed stay valid."""
    return {"overlap": f"{overlap.size} {overlap.unit}"} if overlap.size else {}


def _chunked(
    item: IngestItem,
    max_chars: int,
    overlap: Overlap,
    known_chunks: set[str],
    slots: ParseSlots,
) -> _Pending:
    # Parse and chunk in one slot: both are CPU work the installation's bound covers. Sections
    # given as they are need no slot: taking one (a lock and two flock calls) was a fifth of
    # their chunking (SciFact's 5,183 documents: 32 ms of 0.12 s).
    with slots.held() if item.parses else nullcontext():
        with telemetry.stage("parse"):
            sections = item.sections()
        with telemetry.stage("chunk"):
            chunks = chunk_sections(sections, max_chars=max_chars, overlap=overlap)
    first = sections[0] if sections else None
    document = Document(
        doc_id=item.doc_id,
        title=first.title if first else item.doc_id,
        url=first.url.split("#", 1)[0] if first else "",
        page=first.page if first else "",
        content_hash=item.fingerprint,
        scope=item.scope,
        metadata=first.doc_metadata if first else (),
    )
    fresh = [chunk for chunk in chunks if chunk.chunk_id not in known_chunks]
    return _Pending(item, document, chunks, fresh)


def _embedded(
    pending: Sequence[_Pending],
    embedder: Embedder,
    windows_of: WindowsOf | None,
    report: IndexReport,
    progress: Progress | None,
) -> list[DocumentUpdate]:
    """Each pending document's update, its fresh chunks embedded in batches across documents.

    ``progress`` counts embedding windows, the slow part (an estimate from the chunks'
    texts before embedding; question windows of the ``qa`` strategy come on top)."""
    updates: list[DocumentUpdate] = []
    if windows_of is None:
        # Each chunk is cut into windows once (cutting tokenizes its whole text): the same
        # windows give the progress estimate here and are embedded below.
        fresh = [c for p in pending for c in p.fresh]
        cut = dict(
            zip(
                [c.chunk_id for c in fresh],
                windows_for_many(embedder, [c.text for c in fresh]),
                strict=True,
            )
        )
        expected = sum(len(w) for w in cut.values())
        windows_of = _windows_from(cut)
        with telemetry.stage("embed"):
            cached = _cached_vectors(embedder, cut)
    else:
        cached = {}
        texts = [c.text for p in pending for c in p.fresh]
        expected = sum(len(w) for w in windows_for_many(embedder, texts))
    done = 0
    for batch in _batches(pending):
        fresh = [c for p in batch for c in p.fresh]
        try:
            if all(c.chunk_id in cached for c in fresh):
                vectors = {c.chunk_id: cached[c.chunk_id] for c in fresh}
                windows = sum(len(v) for v in vectors.values())
            else:
                with telemetry.stage("embed"):
                    vectors, windows = embed_chunks(embedder, fresh, windows_of)
        except Exception:
            # Embed the batch's documents one by one, so the error names the file at fault.
            vectors, windows = {}, 0
            for one in batch:
                found, count = _embed_one(one, embedder, windows_of)
                vectors.update(found)
                windows += count
        report.chunks_embedded += sum(len(p.fresh) for p in batch)
        report.windows_embedded += windows
        for one in batch:
            updates.append(
                DocumentUpdate(
                    one.document,
                    one.chunks,
                    {c.chunk_id: vectors[c.chunk_id] for c in one.fresh if c.chunk_id in vectors},
                )
            )
        done += windows
        if progress is not None:
            progress(min(done, max(expected, done)), max(expected, done), batch[-1].item.doc_id)
    return updates


def _cached_vectors(embedder: Embedder, cut: Mapping[str, list[str]]) -> dict[str, Vectors]:
    """The vectors of the chunks in ``cut`` whose every window is in the embedding cache
    (when ``embedder`` has one), read in one pass: the cache looks keys up in sorted order,
    and all of a build's keys share its pages far more than one batch's (SciFact's 10,588
    windows: 0.21 s of CPU read batch by batch, 0.09 in one pass)."""
    read = getattr(embedder, "cached_documents", None)
    if read is None or not cut:
        return {}
    matrix, found = read([window for windows in cut.values() for window in windows])
    # Each chunk's rows end where the next one's start; a chunk with a window missing (or
    # none) is embedded with its batch, as without the cache. Which chunks are whole is
    # counted for all of them at once: ``found[row:end].all()`` per chunk was 1.5 µs each.
    ends = np.cumsum([len(windows) for windows in cut.values()])
    missing = np.concatenate(([0], np.cumsum(~found)))
    starts = np.concatenate(([0], ends[:-1]))
    whole = ((missing[ends] == missing[starts]) & (ends > starts)).tolist()
    vectors: dict[str, Vectors] = {}
    for chunk_id, start, end, ok in zip(cut, starts.tolist(), ends.tolist(), whole, strict=True):
        if ok:
            vectors[chunk_id] = matrix[start:end]
    return vectors


def _windows_from(cut: Mapping[str, list[str]]) -> WindowsOf:
    def windows_of(chunks: Sequence[Chunk]) -> list[list[str]]:
        return [cut[chunk.chunk_id] for chunk in chunks]

    return windows_of


def _embed_one(
    one: _Pending, embedder: Embedder, windows_of: WindowsOf | None
) -> tuple[dict[str, Vectors], int]:
    label = one.item.label or one.item.doc_id
    try:
        return embed_chunks(embedder, one.fresh, windows_of)
    except CitewiseError as error:
        raise EmbeddingError(f"{label}: embedding failed: {error}") from error
    except Exception as error:  # a model runtime error must still name the file
        raise EmbeddingError(f"{label}: embedding failed: {error!r}") from error


def _batches(pending: Iterable[_Pending]) -> Iterable[list[_Pending]]:
    batch: list[_Pending] = []
    size = 0
    for one in pending:
        batch.append(one)
        size += len(one.fresh)
        if size >= EMBED_BATCH_CHUNKS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
