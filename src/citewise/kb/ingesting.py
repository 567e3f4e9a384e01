"""The ingest use-cases of a knowledge base: a docs folder, uploaded files, parsed sections.

Each runs under the knowledge base's write lock and ends in the one pipeline of
:mod:`citewise.kb.ingest`; :class:`~citewise.kb.knowledge_base.KnowledgeBase` exposes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from citewise import telemetry
from citewise.chunking import NO_OVERLAP
from citewise.errors import KnowledgeBaseError, SourceError
from citewise.kb.config import META_EMBEDDER, META_STRATEGY, KBConfig
from citewise.kb.ingest import (
    IndexReport,
    IngestItem,
    Progress,
    folder_items,
    ingest,
    parsed_items,
    section_items,
    source_from_bytes,
    upload_items,
)
from citewise.memory import release_free_memory
from citewise.models import Chunk, Section
from citewise.parsing.preparsed import ParsedDocument, parse_parsed
from citewise.sources import SourceFile
from citewise.sources.layout import docs_tree
from citewise.sources.nav import ScopeRule, folder_api_reference
from citewise.sources.scopes import folder_scopes
from citewise.sources.upload import read_files
from citewise.store import KBStore, Store
from citewise.strategies import StrategyWindows

if TYPE_CHECKING:
    from citewise.embedding.base import Vectors
    from citewise.kb.knowledge_base import KnowledgeBase

__all__ = [
    "add_documents",
    "add_files",
    "add_sections",
    "add_upload",
    "complete_vectors",
    "index_folder",
]


def index_folder(
    kb: KnowledgeBase,
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
    """Bring the knowledge base in line with a docs folder: new and changed files are
    indexed (only changed chunks re-embedded), files gone from it leave the index.

    A knowledge base indexed from another folder is refused (its documents would be
    replaced) unless ``replace``. ``rebuild`` re-embeds everything with the settings'
    embedder; the old index is dropped only once the new one is parsed and embedded,
    so a failed rebuild leaves it as it was.

    Scopes come from the site's nav (``site_config``, or the ``mkdocs.yml`` or
    ``zensical.toml`` above ``folder``) by ``scope_rule``; without a nav, each file's
    top-level folder is its scope. ``meta`` is stored with the index in the same write.
    API directives are expanded from the source the site config names (mkdocstrings'
    ``paths``) or found beside the folder (``src/``); files not indexed are named in the
    report's ``skipped``; ``api_dependencies`` (a site-packages) give the bases its classes
    inherit from another distribution. Page URLs take the form the site's config gives (``a/b/`` or
    ``a/b.html``), or ``page_form`` (``dirhtml``, ``html``); the form used is stored in
    the meta as ``site_layout``. ``vectors_later``: the text is written without
    embedding it (keyword search works at once); :func:`complete_vectors` embeds it.
    """
    tree = docs_tree(folder, page_form)
    with kb.write_lock():
        if kb.exists and not (rebuild or replace):
            _check_source(kb, folder)
        config = kb.config if kb.exists and META_STRATEGY in kb.meta() else None
        max_chars = config.strategy.parent_chars if config else kb.settings.max_chars
        skipped: dict[str, str] = {}
        overlap = config.strategy.chunk_overlap if config else NO_OVERLAP
        items = folder_items(
            folder, site_url=site_url, version=version, max_chars=max_chars, overlap=overlap,
            scopes=folder_scopes(folder, scope_rule, site_config=site_config),
            api=folder_api_reference(folder, site_config, dependencies=api_dependencies),
            skipped=skipped, tree=tree, parse_settings=kb.settings.parsing(),
        )  # fmt: skip
        shape = {"site_url": site_url, "version": version or "", "max_chars": str(max_chars)}
        extra = {"source": str(folder.resolve()), "site_layout": tree.layout.to_meta(),
                 **shape, **(meta or {})}  # fmt: skip
        report = _ingest(kb, 
            items, config, remove_missing=True, meta=extra, progress=progress,
            rebuild=rebuild, vectors_later=vectors_later,
        )  # fmt: skip
        report.skipped = skipped
        return report


def _check_source(kb: KnowledgeBase, folder: Path) -> None:
    recorded, here = kb.meta().get("source"), str(folder.resolve())
    if recorded and recorded != here:
        raise KnowledgeBaseError(
            f"knowledge base {kb.name!r} was indexed from {recorded}, not {here}: "
            "indexing this folder would replace its documents. Re-index its own folder, "
            "choose another knowledge base, or replace them on purpose (citewise index "
            "--replace, or replace=True)"
        )


def add_files(
    kb: KnowledgeBase, paths: Sequence[Path], *, scope: str = "", parsed: Path | None = None
) -> IndexReport:
    """Add files (any supported format) by their file names, and the documents of a
    parsed-content JSON file ``parsed``; see :meth:`add_documents`. Each is held to the
    size limits of the knowledge base's settings (:meth:`Settings.parsing
    <citewise.config.Settings.parsing>`)."""
    from citewise.limits import read_limited
    from citewise.parsing.base import binary_suffixes, supported_suffixes

    if not paths and parsed is None:
        raise SourceError("nothing to add: give files, parsed content, or both")
    known, binary = supported_suffixes(), binary_suffixes()
    limits = kb.settings.parsing().limits
    documents: list[ParsedDocument] = []
    if parsed is not None:
        try:
            documents = parse_parsed(read_limited(limits, parsed), name=str(parsed), limits=limits)
        except OSError as error:
            raise SourceError(f"{parsed}: cannot read it ({error.strerror})") from None
    sources = read_files(paths, known=known, binary=binary, limits=limits)
    return add_documents(kb, sources, scope=scope, parsed=documents)


def add_documents(
    kb: KnowledgeBase,
    sources: Sequence[SourceFile],
    *,
    scope: str = "",
    parsed: Sequence[ParsedDocument] = (),
) -> IndexReport:
    """Add (or replace) documents under the knowledge base's strategy, in one write.

    ``parsed`` documents (an external parser's output) are taken as they are, and are
    preferred over a source of the same id, which is then not parsed. Serialized with other
    ingests and deletes of this knowledge base; searches meanwhile see the state before it
    until it commits. Chunks whose ``qa`` questions could not be generated are listed in the
    report's ``failures``.
    """
    given = {document.id for document in parsed}
    raw = [source for source in sources if source.doc_id not in given]
    parse_settings = kb.settings.parsing()
    with kb.write_lock():
        config = kb.config
        max_chars = config.strategy.parent_chars
        items = upload_items(
            raw, scope=scope, max_chars=max_chars, overlap=config.strategy.chunk_overlap,
            parse_settings=parse_settings,
        )  # fmt: skip
        items += parsed_items(
            parsed, scope=scope, max_chars=max_chars, parse_settings=parse_settings
        )
        return _ingest(kb, items, config, remove_missing=False, meta={})


def add_upload(
    kb: KnowledgeBase,
    files: Sequence[tuple[str, bytes]],
    *,
    scope: str = "",
    parsed: bytes | None = None,
) -> IndexReport:
    """Add uploaded ``(name, bytes)`` files (names are checked to be safe ids), and the
    documents of the parsed-content JSON ``parsed``, preferred over files of the same id."""
    limits = kb.settings.parsing().limits
    documents = parse_parsed(parsed, limits=limits) if parsed is not None else []
    if not files and not documents:
        raise SourceError("nothing to add: give files, parsed content, or both")
    sources = [source_from_bytes(n, d) for n, d in files]
    return add_documents(kb, sources, scope=scope, parsed=documents)


def add_sections(
    kb: KnowledgeBase,
    documents: Mapping[str, Sequence[Section]],
    *,
    progress: Progress | None = None,
) -> IndexReport:
    """Add documents already parsed into sections (a benchmark corpus, another parser)."""
    with kb.write_lock():
        config = kb.config if kb.exists and META_STRATEGY in kb.meta() else None
        return _ingest(kb, 
            section_items(documents), config, remove_missing=False, meta={},
            progress=progress,
        )  # fmt: skip


def _ingest(
    kb: KnowledgeBase,
    items: Sequence[IngestItem],
    config: KBConfig | None,
    *,
    remove_missing: bool,
    meta: Mapping[str, str],
    progress: Progress | None = None,
    rebuild: bool = False,
    vectors_later: bool = False,
) -> IndexReport:
    windows = _windows(kb, config) if config is not None else None
    max_chars = config.strategy.parent_chars if config else kb.settings.max_chars
    store = kb.library.store
    embedder_name = kb.settings.embedder if rebuild else kb.embedder_name
    embedder = kb._embedder or kb.library.embedder(embedder_name)
    # The knowledge base keeps its own settings (strategy, defaults) through a rebuild.
    kept = {**config.to_meta(), META_EMBEDDER: embedder_name} if rebuild and config else {}

    def create() -> AbstractContextManager[KBStore]:
        # Called only once every item is parsed and embedded: the new index is built beside
        # the old one and switched in whole, so a failed or killed rebuild keeps the old one.
        return _rebuilding(store, kb.name, kept)

    with telemetry.operation("ingest", kb=kb.name) as op:
        report = ingest(
            store.open(kb.name) if kb.exists and not rebuild else None,
            create,
            embedder,
            items,
            max_chars=max_chars,
            overlap=config.strategy.chunk_overlap if config else NO_OVERLAP,
            remove_missing=remove_missing,
            meta={META_EMBEDDER: embedder_name, **meta},
            windows_of=windows,
            progress=progress,
            name=kb.name,
            home=kb.settings.home,
            vectors_later=vectors_later,
        )
        op.set(files=report.files, changed=len(report.added) + len(report.updated),
               removed=len(report.removed), chunks_embedded=report.chunks_embedded)  # fmt: skip
    report.failures = list(windows.failures) if windows is not None else []
    # What the ingest allocated is freed now: give it back, not keep the process that size.
    release_free_memory()
    return report


def complete_vectors(kb: KnowledgeBase, on_batch: Callable[[int, int], None] | None = None) -> int:
    """Embed the chunks ``kb`` holds without vectors (written text first, or left by an
    interrupted run), batch by batch under its write lock; returns how many were embedded.
    ``on_batch(done, total)`` after each batch is written."""
    from citewise.kb.ingest import embed_chunks
    from citewise.kb.vector_fill import embed_missing

    with kb.write_lock():
        config = kb.config if META_STRATEGY in kb.meta() else None
        windows = _windows(kb, config) if config is not None else None
        embedder = kb.embedder

        def embed(chunks: Sequence[Chunk]) -> dict[str, Vectors]:
            return embed_chunks(embedder, chunks, windows)[0]

        with telemetry.operation("ingest", kb=kb.name) as op:
            done = embed_missing(kb.library.store.open(kb.name), embed, on_batch)
            op.set(chunks_embedded=done)
        return done


@contextmanager
def _rebuilding(store: Store, name: str, meta: Mapping[str, str]) -> Iterator[KBStore]:
    """``store.rebuild``; a plugin engine without it drops and re-creates (not atomic)."""
    rebuild = getattr(store, "rebuild", None)
    if rebuild is not None:
        with rebuild(name, meta) as handle:
            yield handle
        return
    if store.exists(name):
        store.drop(name)
    yield store.create(name, meta)


def _windows(kb: KnowledgeBase, config: KBConfig) -> StrategyWindows:
    model = kb.model_for(config.defaults.chat_model) if config.strategy.uses_model else None
    return StrategyWindows(config.strategy, kb.embedder, model)
