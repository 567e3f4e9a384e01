"""Indexes a folder of docs into a knowledge base, re-embedding only chunks that changed."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from citewise.chunking import chunk_sections
from citewise.embedding import embedding_windows
from citewise.embedding.base import Embedder, Vectors
from citewise.errors import CitewiseError, EmbeddingError, KnowledgeBaseError, SourceError
from citewise.limits import check_file_size, check_text_size
from citewise.models import Chunk, Document, Section
from citewise.parsing.base import binary_parser, parser_for, supported_suffixes
from citewise.sources import SourceFile, read_folder
from citewise.sources.nav import ScopeRule, folder_nav_scopes
from citewise.store.base import DocumentUpdate, Store

# Called after each file with (files done, files in all, doc id).
Progress = Callable[[int, int, str], None]
# Maps a doc id to its scopes: one name, or several separated by single spaces.
ScopeOf = Callable[[str], str]
# The texts to embed for each chunk (its vectors all point at it); default: embedding windows.
# Index strategies (citewise.strategies) supply others: small child windows, questions.
WindowsOf = Callable[[Sequence[Chunk]], list[list[str]]]


@dataclass
class IndexReport:
    """What an indexing run did."""

    kb: str
    files: int = 0
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    chunks: int = 0
    chunks_embedded: int = 0
    windows_embedded: int = 0
    seconds: float = 0.0
    # Chunks stored with less than their strategy asked for (a failed question generation).
    failures: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.kb}: {self.files} files ({len(self.added)} added, {len(self.updated)} "
            f"updated, {len(self.unchanged)} unchanged, {len(self.removed)} removed), "
            f"{self.chunks} chunks, {self.chunks_embedded} embedded, {self.seconds:.1f}s"
        )


def scope_of(doc_id: str) -> str:
    """A file's scope when the docs have no nav: its top-level folder, or ``""`` at the root."""
    head, sep, _ = doc_id.partition("/")
    return head if sep else ""


def folder_scopes(
    folder: Path, rule: ScopeRule | None = None, *, site_config: Path | None = None
) -> ScopeOf:
    """Scopes from the site's nav (``mkdocs.yml``/``zensical.toml`` above ``folder``, or
    ``site_config``) when there is one, else each file's top-level folder."""
    nav = folder_nav_scopes(folder, rule, config=site_config)
    return nav.scope_of if nav is not None else scope_of


def parse_file(
    source: SourceFile, *, site_url: str, version: str | None, scope: str | None = None
) -> list[Section]:
    """The file's sections; files and parsed text over the size limits are refused, unchunked."""
    parser = parser_for(source.path)
    if parser is None:
        raise SourceError(f"{source.path}: no parser for this kind of file")
    check_file_size(source.path, len(source.data))
    doc_id, scope = source.doc_id, scope_of(source.doc_id) if scope is None else scope
    binary = binary_parser(parser)
    if binary is not None:
        sections = binary.parse_bytes(
            source.data, doc_id=doc_id, site_url=site_url, version=version, scope=scope
        )
    else:
        sections = parser.parse(
            source.text, doc_id=doc_id, site_url=site_url, version=version, scope=scope
        )
    check_text_size(source.path, (section.text for section in sections))
    return sections


def parse_folder(
    folder: Path,
    *,
    site_url: str = "",
    version: str | None = None,
    scopes: ScopeOf | None = None,
) -> list[Section]:
    """Every section of every documentation file under ``folder``, in path order."""
    sources = read_folder(folder, supported_suffixes())
    scope = scopes or folder_scopes(folder)
    sections: list[Section] = []
    for source in sources:
        sections.extend(
            parse_file(source, site_url=site_url, version=version, scope=scope(source.doc_id))
        )
    return sections


def document_hash(source: SourceFile, settings: dict[str, str]) -> str:
    """Changes when the file or anything that shapes its chunks (site URL, version, size) does."""
    digest = hashlib.sha256(source.data)  # text files: their text in UTF-8, as before
    for key in sorted(settings):
        digest.update(f"\0{key}={settings[key]}".encode())
    return digest.hexdigest()


def embed_chunks(
    embedder: Embedder, chunks: Sequence[Chunk], windows_of: WindowsOf | None = None
) -> tuple[dict[str, Vectors], int]:
    """Vectors for each chunk, one row per embedding window; also the number of windows."""
    if windows_of is None:
        windows = [embedding_windows(chunk.text, embedder.window_chars) for chunk in chunks]
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


def index_folder(
    store: Store,
    embedder: Embedder,
    kb: str,
    folder: Path,
    *,
    site_url: str = "",
    version: str | None = None,
    max_chars: int = 2000,
    progress: Progress | None = None,
    extra_meta: dict[str, str] | None = None,
    scopes: ScopeOf | None = None,
    windows_of: WindowsOf | None = None,
) -> IndexReport:
    """Bring knowledge base ``kb`` in line with ``folder``.

    Unchanged files are skipped, changed files re-embed only their new chunks, and files
    gone from the folder leave the index. Nothing is written until every file is parsed and
    embedded; then one transaction applies the change, so a failure leaves the index intact.
    ``scopes`` maps a doc id to its scopes (default: ``folder_scopes(folder)``); the names
    in use are stored in the meta key ``scopes``.
    """
    started = time.perf_counter()
    sources = read_folder(folder, supported_suffixes())
    scope = scopes or folder_scopes(folder)
    meta = store.get_meta(kb) if store.exists(kb) else {}
    stored_embedder = meta.get("embedder")
    if stored_embedder and stored_embedder != embedder.model_id:
        raise KnowledgeBaseError(
            f"knowledge base {kb!r} was embedded with {stored_embedder}, not "
            f"{embedder.model_id}: re-create it (citewise index --rebuild)"
        )
    stored = {doc.doc_id: doc for doc in store.documents(kb)} if meta else {}
    known_chunks = store.chunk_ids(kb) if meta else set()
    shape = {"site_url": site_url, "version": version or "", "max_chars": str(max_chars)}

    report = IndexReport(kb=kb, files=len(sources))
    updates: list[DocumentUpdate] = []
    names: set[str] = set()
    for done, source in enumerate(sources, start=1):
        doc_scope = scope(source.doc_id)
        names.update(doc_scope.split())
        # The scope is part of the hash so a changed nav rewrites the chunks' scopes
        # (their ids, and so their vectors, stay: nothing is re-embedded).
        content_hash = document_hash(source, {**shape, "scope": doc_scope})
        previous = stored.get(source.doc_id)
        if previous is not None and previous.content_hash == content_hash:
            report.unchanged.append(source.doc_id)
        else:
            update, embedded, windows = prepare_document(
                source,
                embedder,
                known_chunks,
                content_hash,
                site_url,
                version,
                max_chars,
                doc_scope,
                windows_of,
            )
            updates.append(update)
            report.chunks_embedded += embedded
            report.windows_embedded += windows
            (report.updated if previous else report.added).append(source.doc_id)
        if progress is not None:
            progress(done, len(sources), source.doc_id)

    present = {source.doc_id for source in sources}
    report.removed = sorted(doc_id for doc_id in stored if doc_id not in present)
    new_meta = {
        "embedder": embedder.model_id,
        "source": str(folder.resolve()),
        "indexed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **shape,
        "scopes": " ".join(sorted(names)),
        **(extra_meta or {}),
    }
    store.apply(kb, updates, report.removed, meta=new_meta)
    report.chunks = len(store.chunk_ids(kb))
    report.seconds = time.perf_counter() - started
    return report


def prepare_document(
    source: SourceFile,
    embedder: Embedder,
    known_chunks: set[str],
    content_hash: str,
    site_url: str,
    version: str | None,
    max_chars: int,
    scope: str,
    windows_of: WindowsOf | None = None,
) -> tuple[DocumentUpdate, int, int]:
    """Parse, chunk and embed one file: its update, chunks embedded and windows embedded.

    Chunks in ``known_chunks`` are already stored with their vectors and are not embedded.
    """
    sections = parse_file(source, site_url=site_url, version=version, scope=scope)
    chunks = chunk_sections(sections, max_chars=max_chars)
    first = sections[0] if sections else None
    document = Document(
        doc_id=source.doc_id,
        title=first.title if first else source.doc_id,
        url=first.url.split("#", 1)[0] if first else "",
        page=first.page if first else "",
        content_hash=content_hash,
        scope=scope,
    )
    fresh = [chunk for chunk in chunks if chunk.chunk_id not in known_chunks]
    try:
        vectors, windows = embed_chunks(embedder, fresh, windows_of)
    except CitewiseError as error:
        raise EmbeddingError(f"{source.path}: embedding failed: {error}") from error
    except Exception as error:  # a model runtime error must still name the file
        raise EmbeddingError(f"{source.path}: embedding failed: {error!r}") from error
    return DocumentUpdate(document, chunks, vectors), len(fresh), windows
