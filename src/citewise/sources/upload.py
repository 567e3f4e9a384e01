"""Uploaded files (a name and bytes) as sources, their names checked to be safe document ids."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path, PurePosixPath

from citewise.config import Limits
from citewise.documents import MAX_DOC_ID_CHARS, SourceFile, upload_doc_id
from citewise.errors import SourceError
from citewise.limits import read_limited

__all__ = ["MAX_DOC_ID_CHARS", "read_files", "upload_doc_id", "upload_source"]


def upload_source(
    name: str, data: bytes, *, known: Collection[str], binary: Collection[str]
) -> SourceFile:
    """An uploaded file as a SourceFile; its suffix must be one of ``known`` (lowercase,
    with the dot); ``binary`` suffixes are kept as bytes, others are read as UTF-8 text."""
    doc_id = upload_doc_id(name)
    suffix = PurePosixPath(doc_id).suffix.lower()
    if suffix not in known:
        listed = ", ".join(sorted(known))
        raise SourceError(f"{name}: unsupported format {suffix or '(no suffix)'} (known: {listed})")
    return SourceFile(doc_id, Path(doc_id), data=data, binary=suffix in binary)


def read_files(
    paths: Sequence[Path],
    *,
    known: Collection[str],
    binary: Collection[str],
    limits: Limits | None = None,
) -> list[SourceFile]:
    """Files on disk as uploads named by their file names (refused before reading when
    over the file size limit of ``limits``; default: :class:`Limits`' defaults)."""
    limits = limits or Limits()
    sources = []
    for path in paths:
        try:
            data = read_limited(limits, path)
        except OSError as error:
            raise SourceError(f"{path}: cannot read it ({error.strerror})") from None
        sources.append(upload_source(path.name, data, known=known, binary=binary))
    return sources
