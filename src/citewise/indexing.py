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
from citewise.models import Chunk, Document, Section
from citewise.parsing.base import parser_for, supported_suffixes
from citewise.sources import SourceFile, read_folder
from citewise.store.base import DocumentUpdate, Store

# Called after each file with (files done, files in all, doc id).
Progress = Callable[[int, int, str], None]


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

    def summary(self) -> str:
        return (
            f"{self.kb}: {self.files} files ({len(self.added)} added, {len(self.updated)} "
            f"updated, {len(self.unchanged)} unchanged, {len(self.removed)} removed), "
            f"{self.chunks} chunks, {self.chunks_embedded} embedded, {self.seconds:.1f}s"
        )


def scope_of(doc_id: str) -> str:
    """The part of the docs a file belongs to: its top-level folder, or ``""`` at the root."""
    head, sep, _ = doc_id.partition("/")
    return head if sep else ""


def parse_file(source: SourceFile, *, site_url: str, version: str | None) -> list[Section]:
    parser = parser_for(source.path)
    if parser is None:
        raise SourceError(f"{source.path}: no parser for this kind of file")
    return parser.parse(
        source.text,
        doc_id=source.doc_id,
        site_url=site_url,
        version=version,
        scope=scope_of(source.doc_id),
    )


def parse_folder(folder: Path, *, site_url: str = "", version: str | None = None) -> list[Section]:
    """Every section of every documentation file under ``folder``, in path order."""
    sections: list[Section] = []
    for source in read_folder(folder, supported_suffixes()):
        sections.extend(parse_file(source, site_url=site_url, version=version))
    return sections


def document_hash(source: SourceFile, settings: dict[str, str]) -> str:
    """Changes when the file or anything that shapes its chunks (site URL, version, size) does."""
    digest = hashlib.sha256(source.text.encode("utf-8"))
    for key in sorted(settings):
        digest.update(f"\0{key}={settings[key]}".encode())
    return digest.hexdigest()


def embed_chunks(embedder: Embedder, chunks: Sequence[Chunk]) -> tuple[dict[str, Vectors], int]:
    """Vectors for each chunk, one row per embedding window; also the number of windows."""
    windows = [embedding_windows(chunk.text, embedder.window_chars) for chunk in chunks]
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
) -> IndexReport:
    """Bring knowledge base ``kb`` in line with ``folder``.

    Unchanged files are skipped, changed files re-embed only their new chunks, and files
    gone from the folder leave the index. Nothing is written until every file is parsed and
    embedded; then one transaction applies the change, so a failure leaves the index intact.
    """
    started = time.perf_counter()
    sources = read_folder(folder, supported_suffixes())
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
    for done, source in enumerate(sources, start=1):
        content_hash = document_hash(source, shape)
        previous = stored.get(source.doc_id)
        if previous is not None and previous.content_hash == content_hash:
            report.unchanged.append(source.doc_id)
        else:
            update, embedded, windows = _prepare(
                source, embedder, known_chunks, content_hash, site_url, version, max_chars
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
        **(extra_meta or {}),
    }
    store.apply(kb, updates, report.removed, meta=new_meta)
    report.chunks = len(store.chunk_ids(kb))
    report.seconds = time.perf_counter() - started
    return report


def _prepare(
    source: SourceFile,
    embedder: Embedder,
    known_chunks: set[str],
    content_hash: str,
    site_url: str,
    version: str | None,
    max_chars: int,
) -> tuple[DocumentUpdate, int, int]:
    sections = parse_file(source, site_url=site_url, version=version)
    chunks = chunk_sections(sections, max_chars=max_chars)
    first = sections[0] if sections else None
    document = Document(
        doc_id=source.doc_id,
        title=first.title if first else source.doc_id,
        url=first.url.split("#", 1)[0] if first else "",
        page=first.page if first else "",
        content_hash=content_hash,
        scope=scope_of(source.doc_id),
    )
    fresh = [chunk for chunk in chunks if chunk.chunk_id not in known_chunks]
    try:
        vectors, windows = embed_chunks(embedder, fresh)
    except CitewiseError as error:
        raise EmbeddingError(f"{source.path}: embedding failed: {error}") from error
    except Exception as error:  # a model runtime error must still name the file
        raise EmbeddingError(f"{source.path}: embedding failed: {error!r}") from error
    return DocumentUpdate(document, chunks, vectors), len(fresh), windows
