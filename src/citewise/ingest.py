"""Adds uploaded files to a knowledge base through the same parse → chunk → embed → store path."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from citewise.embedding.base import Embedder
from citewise.errors import KnowledgeBaseError, SourceError
from citewise.indexing import IndexReport, WindowsOf, document_hash, prepare_document
from citewise.parsing.base import binary_suffixes, parser_for, supported_suffixes
from citewise.sources import SourceFile
from citewise.store.base import DocumentUpdate, Store

MAX_DOC_ID_CHARS = 255


def upload_doc_id(name: str) -> str:
    """A document id from an uploaded file's name: a relative POSIX path, nothing hostile.

    ``a\\b.md`` becomes ``a/b.md``; absolute paths, ``..``, empty names and control
    characters are refused, since ids appear in URLs and in the CLI's output.
    """
    path = PurePosixPath(name.replace("\\", "/"))
    parts = [p for p in path.parts if p not in ("", ".")]
    if (
        not parts
        or path.is_absolute()
        or ".." in parts
        or any(ord(c) < 32 for c in name)
        or len(name) > MAX_DOC_ID_CHARS
    ):
        raise SourceError(f"invalid document name {name!r}: use a relative file name")
    return "/".join(parts)


def source_from_bytes(name: str, data: bytes) -> SourceFile:
    """An uploaded file as a SourceFile; its suffix must name a supported format."""
    doc_id = upload_doc_id(name)
    suffix = PurePosixPath(doc_id).suffix.lower()
    if parser_for(doc_id) is None:
        known = ", ".join(sorted(supported_suffixes()))
        raise SourceError(f"{name}: unsupported format {suffix or '(no suffix)'} (known: {known})")
    return SourceFile(doc_id, Path(doc_id), data=data, binary=suffix in binary_suffixes())


def add_sources(
    store: Store,
    embedder: Embedder,
    kb: str,
    sources: Sequence[SourceFile],
    *,
    max_chars: int,
    windows_of: WindowsOf | None = None,
    scope: str = "",
    meta: dict[str, str] | None = None,
) -> IndexReport:
    """Add (or replace) ``sources`` in knowledge base ``kb``; other documents stay.

    A file whose content and settings are unchanged is skipped; nothing is written until every
    file is parsed and embedded, then one transaction stores them all, so a failure (a file
    over a size limit, a parse error) leaves the knowledge base as it was. The caller holds
    the knowledge base's write lock.
    """
    started = time.perf_counter()
    names = [source.doc_id for source in sources]
    if len(set(names)) != len(names):
        raise SourceError(f"the same document name appears twice: {sorted(names)}")
    stored_meta = store.get_meta(kb) if store.exists(kb) else {}
    stored_embedder = stored_meta.get("embedder")
    if stored_embedder and stored_embedder != embedder.model_id:
        raise KnowledgeBaseError(
            f"knowledge base {kb!r} was embedded with {stored_embedder}, not {embedder.model_id}"
        )
    stored = {doc.doc_id: doc for doc in store.documents(kb)} if stored_meta else {}
    known_chunks = store.chunk_ids(kb) if stored_meta else set()
    shape = {"max_chars": str(max_chars), "scope": scope, "upload": "1"}
    report = IndexReport(kb=kb, files=len(sources))
    updates: list[DocumentUpdate] = []
    for source in sources:
        content_hash = document_hash(source, shape)
        previous = stored.get(source.doc_id)
        if previous is not None and previous.content_hash == content_hash:
            report.unchanged.append(source.doc_id)
            continue
        update, embedded, windows = prepare_document(
            source, embedder, known_chunks, content_hash, "", None, max_chars, scope, windows_of
        )
        updates.append(update)
        report.chunks_embedded += embedded
        report.windows_embedded += windows
        (report.updated if previous else report.added).append(source.doc_id)
    scopes = set(stored_meta.get("scopes", "").split()) | set(scope.split())
    new_meta = {
        "embedder": embedder.model_id,
        "indexed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "scopes": " ".join(sorted(scopes)),
        **(meta or {}),
    }
    store.apply(kb, updates, (), meta=new_meta)
    report.chunks = len(store.chunk_ids(kb))
    report.seconds = time.perf_counter() - started
    return report
