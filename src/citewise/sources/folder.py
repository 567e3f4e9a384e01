"""Reads the documentation files of a folder, refusing unreadable ones with a clear error."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from citewise.errors import SourceError

# Hidden folders (.git, .venv) and build output never hold the docs being indexed.
_SKIPPED_DIRS = {"node_modules", "__pycache__", "site", "public", "_site"}


@dataclass(frozen=True)
class SourceFile:
    """One readable document: ``doc_id`` is its POSIX path relative to the folder."""

    doc_id: str
    path: Path
    text: str

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def read_folder(root: Path, suffixes: Collection[str]) -> list[SourceFile]:
    """Every file under ``root`` whose suffix is in ``suffixes``, sorted by path.

    Raises:
        SourceError: the folder is missing or holds no such file, or a file is binary or
            not UTF-8 (the message names the file).
    """
    if not root.exists():
        raise SourceError(f"folder not found: {root}")
    if not root.is_dir():
        raise SourceError(f"not a folder: {root}")
    wanted = {s.lower() for s in suffixes}
    files: list[SourceFile] = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part.startswith(".") or part in _SKIPPED_DIRS for part in relative.parts[:-1]):
            continue
        if relative.name.startswith(".") or not path.is_file():
            continue
        if path.suffix.lower() not in wanted:
            continue
        files.append(SourceFile(relative.as_posix(), path, read_text_file(path)))
    if not files:
        kinds = ", ".join(sorted(wanted))
        raise SourceError(f"no documentation files ({kinds}) found in {root}")
    return files


def read_text_file(path: Path) -> str:
    """The file's text, with a clear error for binary or non-UTF-8 content."""
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise SourceError(f"{path}: binary file, not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceError(
            f"{path}: not valid UTF-8 (byte {error.start}: {data[error.start : error.start + 1]!r})"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")
