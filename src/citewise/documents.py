"""A readable document and its id: what a source yields and a parser reads.

Below both the sources and the parsers (neither imports the other for these), so the
parsers can take a ``SourceFile`` and check an id without reading any source.
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath

from citewise.errors import SourceError

__all__ = ["MAX_DOC_ID_CHARS", "SourceFile", "decode_text", "upload_doc_id"]

MAX_DOC_ID_CHARS = 255


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
