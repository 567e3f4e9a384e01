"""Reads the documentation files of a folder, refusing unreadable ones with a clear error."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from pathlib import Path

from citewise.errors import SourceError
from citewise.limits import read_limited

# Hidden folders (.git, .venv) and build output never hold the docs being indexed.
_SKIPPED_DIRS = {"node_modules", "__pycache__", "site", "public", "_site"}


class SourceFile:
    """One readable document: ``doc_id`` is its POSIX path relative to the folder.

    A text format carries its decoded ``text`` (``SourceFile(doc_id, path, text)``); a binary
    format such as PDF or DOCX carries its bytes (``SourceFile(doc_id, path, data=b, binary=True)``)
    and has no text. Given ``data`` without ``binary``, the text is decoded from it when first
    asked for. ``data`` is always available: for text it is the UTF-8 of ``text``.
    """

    __slots__ = ("_encoded", "_raw", "_text", "binary", "doc_id", "path")

    def __init__(
        self,
        doc_id: str,
        path: Path,
        text: str | None = None,
        *,
        data: bytes | None = None,
        binary: bool = False,
    ) -> None:
        if text is None and data is None:
            raise ValueError("a SourceFile needs its text or its data")
        if binary and data is None:
            raise ValueError("a binary SourceFile needs its data")
        self.doc_id = doc_id
        self.path = path
        self.binary = binary
        self._text = text
        self._raw = data
        self._encoded: bytes | None = None

    @property
    def text(self) -> str:
        """The document's text; a :class:`SourceError` for a binary format."""
        if self._text is None:
            if self.binary or self._raw is None:
                raise SourceError(f"{self.path}: binary format, read its data instead of text")
            self._text = decode_text(self._raw, self.path)
        return self._text

    @property
    def data(self) -> bytes:
        """The document's bytes: the file for a binary format, the text's UTF-8 otherwise."""
        if self.binary and self._raw is not None:
            return self._raw
        if self._encoded is None:
            # The normalised text, not the raw bytes: a CRLF or BOM change is no edit.
            self._encoded = self.text.encode("utf-8")
        return self._encoded

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def __repr__(self) -> str:
        kind = "binary" if self.binary else "text"
        return f"SourceFile({self.doc_id!r}, {str(self.path)!r}, {kind})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceFile):
            return NotImplemented
        mine = (self.doc_id, self.path, self.binary, self.data)
        return mine == (other.doc_id, other.path, other.binary, other.data)

    def __hash__(self) -> int:
        return hash((self.doc_id, self.path, self.binary))


def read_folder(
    root: Path,
    suffixes: Collection[str],
    *,
    binary: Collection[str] | None = None,
    refused: dict[str, str] | None = None,
    keep: Callable[[str], bool] | None = None,
) -> list[SourceFile]:
    """Every file under ``root`` whose suffix is in ``suffixes`` (and, with ``keep``, whose
    POSIX path relative to ``root`` it accepts), sorted by path.

    Files whose suffix is in ``binary`` (by default, every suffix whose registered parser
    reads bytes: PDF, DOCX) keep their bytes; the others are decoded as UTF-8 text. A link
    (to a file, or through a linked folder) that resolves outside ``root`` is never read:
    ``ln -s /etc/passwd docs/passwd.md`` must not make ``/etc/passwd`` searchable; each one
    (a linked folder outside too) is named in ``refused`` with the reason. A hard link is
    not a link but the file itself, wherever its other names are: it is read.

    Raises:
        SourceError: the folder is missing or holds no such file, or a file is binary or
            not UTF-8 (the message names the file).
        TooLargeError: a file is over :data:`citewise.limits.MAX_FILE_BYTES`; it is refused
            before it is read.
    """
    if not root.exists():
        raise SourceError(f"folder not found: {root}")
    if not root.is_dir():
        raise SourceError(f"not a folder: {root}")
    wanted = {s.lower() for s in suffixes}
    if binary is None:
        from citewise.parsing.base import binary_suffixes  # a soft link: sources → parsers

        binary = binary_suffixes()
    binary_wanted = {s.lower() for s in binary}
    files: list[SourceFile] = []
    inside = root.resolve()
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part.startswith(".") or part in _SKIPPED_DIRS for part in relative.parts[:-1]):
            continue
        if relative.name.startswith("."):
            continue
        if path.is_symlink() and path.is_dir():
            # Never walked (rglob does not follow linked folders): one leading outside is
            # named, so "why is nothing of it indexed?" has an answer in the report.
            if refused is not None and not path.resolve().is_relative_to(inside):
                refused[relative.as_posix()] = "a link to a folder outside the folder: not read"
            continue
        if not path.is_file():
            continue
        suffix = path.suffix.lower()
        if suffix not in wanted or (keep is not None and not keep(relative.as_posix())):
            continue
        if not path.resolve().is_relative_to(inside):
            if refused is not None:
                refused[relative.as_posix()] = "a link to a file outside the folder: not read"
            continue
        if suffix in binary_wanted:
            files.append(
                SourceFile(relative.as_posix(), path, data=read_limited(path), binary=True)
            )
        else:
            files.append(SourceFile(relative.as_posix(), path, read_text_file(path)))
    if not files:
        kinds = ", ".join(sorted(wanted))
        raise SourceError(f"no documentation files ({kinds}) found in {root}")
    return files


def read_text_file(path: Path) -> str:
    """The file's text, with a clear error for binary, non-UTF-8 or too large content."""
    return decode_text(read_limited(path), path)


def decode_text(data: bytes, name: str | Path) -> str:
    """``data`` as UTF-8 text with ``\\n`` line ends; a clear error for binary or other bytes."""
    # Anywhere in the file, not only its head: a NUL later on would otherwise reach the
    # stored text and every terminal that prints it.
    if (at := data.find(b"\x00")) >= 0:
        raise SourceError(f"{name}: binary file, not text (a NUL byte at offset {at})")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceError(
            f"{name}: not valid UTF-8 (byte {error.start}: {data[error.start : error.start + 1]!r})"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")
