"""Reads the documentation files of a folder, refusing unreadable ones with a clear error."""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

from citewise.config import Limits
from citewise.documents import SourceFile, decode_text
from citewise.errors import SourceError
from citewise.limits import read_limited

# Hidden folders (.git, .venv) and build output never hold the docs being indexed.
_SKIPPED_DIRS = {"node_modules", "__pycache__", "site", "public", "_site"}


def read_folder(
    root: Path,
    suffixes: Collection[str],
    *,
    binary: Collection[str] | None = None,
    refused: dict[str, str] | None = None,
    keep: Callable[[str], bool] | None = None,
    limits: Limits | None = None,
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
        TooLargeError: a file is over the file size limit of ``limits`` (default:
            :class:`~citewise.config.Limits`' defaults, 16 MiB); it is refused before it
            is read.
    """
    limits = limits or Limits()
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
            data = read_limited(limits, path)
            files.append(SourceFile(relative.as_posix(), path, data=data, binary=True))
        else:
            files.append(SourceFile(relative.as_posix(), path, read_text_file(path, limits)))
    if not files:
        kinds = ", ".join(sorted(wanted))
        raise SourceError(f"no documentation files ({kinds}) found in {root}")
    return files


def read_text_file(path: Path, limits: Limits | None = None) -> str:
    """The file's text, with a clear error for binary, non-UTF-8 or too large content
    (over ``limits``; default: :class:`~citewise.config.Limits`' defaults)."""
    return decode_text(read_limited(limits or Limits(), path), path)
