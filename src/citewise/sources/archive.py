"""Extracts only the docs folder of a source archive (.tar.gz or .zip), refusing hostile entries.

An archive is untrusted input. Before anything is written, every entry name is checked (no
absolute path, no ``..``), and every entry to extract must be a plain file or folder (hard
links, devices and FIFOs are refused) within caps on file count and size. A symbolic link is
never written as a link: its target is resolved by name inside the archive, and a link to a
file or folder there is materialised as a copy of it; a link that points outside the archive,
dangles or loops is skipped and reported (:func:`skipped_links`). Files are written into a
fresh temporary folder beside the destination, which is renamed into place only when complete:
a refused or failed extraction leaves nothing behind.
"""

from __future__ import annotations

import json
import lzma
import os
import shutil
import tarfile
import uuid
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from citewise.errors import DocsFolderMissingError, SourceError, UnsafeArchiveError
from citewise.sources.nav import SITE_CONFIG_NAMES

__all__ = ["ExtractLimits", "extract_docs", "skipped_links"]

MIB = 1024 * 1024
_COPY_BLOCK = 64 * 1024
_MAX_LINK_HOPS = 8  # a chain of links longer than this is treated as a loop
_MAX_LINK_TARGET = 4096  # a zip stores a link's target as its content
# Beside the extracted docs folder: the links that were skipped, and why (never indexed).
SKIPPED_LINKS_FILE = ".skipped-links.json"


@dataclass(frozen=True)
class ExtractLimits:
    """Caps that refuse a decompression bomb before it fills the disk.

    ``max_files`` and ``max_bytes`` bound what is extracted (the docs folder); ``max_members``
    and ``max_archive_bytes`` bound the scan of the whole archive.
    """

    max_files: int = 10_000
    max_bytes: int = 256 * MIB
    max_members: int = 500_000
    max_archive_bytes: int = 4096 * MIB


@dataclass(frozen=True)
class _Entry:
    """One archive member, reduced to what extraction needs."""

    parts: tuple[str, ...]  # the normalized path, split
    kind: str  # "file", "dir", "symlink", "hardlink" or "special"
    size: int
    open: Callable[[], IO[bytes]]
    target: str = ""  # a symlink's target, as stored


def extract_docs(
    archive: Path, dest: Path, *, docs_dir: str = "docs", limits: ExtractLimits | None = None
) -> Path:
    """Extract ``docs_dir`` of ``archive`` (and the site config beside it) to ``dest``.

    The docs folder is looked for under the archive's single top-level folder (as in GitHub's
    tag archives, ``repo-1.0/docs/``), else at its root. ``dest`` receives ``dest/{docs_dir}/``
    and the files next to it (``mkdocs.yml``, ``.readthedocs.yaml``, ``CHANGES.md``…); if
    ``dest`` appears meanwhile (another process extracted the same archive), that copy is kept.
    Symbolic links are materialised or skipped (module docstring); the skipped ones are listed by
    :func:`skipped_links` ``(dest)``.

    Returns:
        The extracted docs folder, ``dest / docs_dir``.

    Raises:
        UnsafeArchiveError: an entry is absolute or has ``..``, an entry to extract is a hard
            link, device or FIFO, or a cap of ``limits`` is exceeded.
        DocsFolderMissingError: the archive has no such folder.
        SourceError: the file is not a readable .tar(.gz/.bz2/.xz) or .zip archive.
    """
    limits = limits or ExtractLimits()
    wanted = PurePosixPath(docs_dir.strip("/"))
    if wanted.is_absolute() or not wanted.parts or ".." in wanted.parts:
        raise SourceError(f"invalid docs folder {docs_dir!r}: use a relative path")
    with _entries(archive, limits) as entries:
        prefix = _docs_prefix(entries, wanted.parts, archive)
        strip = prefix[: -len(wanted.parts)]
        skipped: dict[tuple[str, ...], str] = {}
        selected = _select(entries, prefix, limits, archive, skipped)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.parent / f".{dest.name}.{uuid.uuid4().hex}.tmp"
        tmp.mkdir()
        try:
            _write(selected, strip, tmp, limits, archive)
            if skipped:
                named = {"/".join(path[len(strip) :]): why for path, why in skipped.items()}
                (tmp / SKIPPED_LINKS_FILE).write_text(json.dumps(named, indent=1) + "\n")
            try:
                os.rename(tmp, dest)
            except OSError:
                if not dest.is_dir():
                    raise
                # Another process finished the same extraction first: keep its copy.
        except OSError as error:
            raise SourceError(f"{archive.name}: cannot extract: {error}") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return dest / docs_dir.strip("/")


def skipped_links(dest: Path) -> dict[str, str]:
    """The symbolic links :func:`extract_docs` skipped into ``dest``: path → why."""
    try:
        found = json.loads((dest / SKIPPED_LINKS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


@contextmanager
def _entries(archive: Path, limits: ExtractLimits) -> Iterator[list[_Entry]]:
    """Every entry of the archive, names checked, within the scan caps."""
    try:
        with archive.open("rb") as handle:
            magic = handle.read(4)
    except OSError as error:
        raise SourceError(f"cannot read archive {archive}: {error}") from None
    try:
        if magic[:2] == b"PK":
            with zipfile.ZipFile(archive) as zf:
                yield _checked((_zip_entry(zf, info) for info in zf.infolist()), limits, archive)
        else:
            with tarfile.open(archive, "r:*") as tar:
                yield _checked(_tar_entries(tar), limits, archive)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError) as error:
        # tarfile lists each compression it tried, one per line: the error is one line.
        reason = str(error) if "\n" not in str(error) else "not a tar, gzip, bzip2 or xz file"
        raise SourceError(f"{archive.name}: not a readable .tar.gz or .zip ({reason})") from None


def _tar_entries(tar: tarfile.TarFile) -> Iterator[_Entry]:
    # next() reads headers one at a time, so the caps stop a huge archive mid-scan.
    while (info := tar.next()) is not None:

        def opener(info: tarfile.TarInfo = info) -> IO[bytes]:
            handle = tar.extractfile(info)
            if handle is None:  # pragma: no cover - only for non-files, never opened
                raise SourceError(f"{info.name}: not a file")
            return handle

        kind = _tar_kind(info)
        yield _Entry(_split(info.name), kind, info.size, opener, info.linkname)


def _tar_kind(info: tarfile.TarInfo) -> str:
    if info.isreg():
        return "file"
    if info.isdir():
        return "dir"
    if info.issym():
        return "symlink"
    return "hardlink" if info.islnk() else "special"


def _zip_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> _Entry:
    mode = info.external_attr >> 16
    file_type = mode & 0o170000
    target = ""
    if info.is_dir():
        kind = "dir"
    elif file_type == 0o120000:
        kind = "symlink"
        if info.file_size <= _MAX_LINK_TARGET:
            target = zf.read(info).decode("utf-8", "replace")
    elif file_type in (0, 0o100000):
        kind = "file"
    else:
        kind = "special"
    return _Entry(_split(info.filename), kind, info.file_size, lambda: zf.open(info), target)


def _split(name: str) -> tuple[str, ...]:
    """The entry's path parts; a raw name that is absolute or climbs with ``..`` is kept as
    is so the check below can refuse it by name."""
    return tuple(name.replace("\\", "/").split("/"))


def _checked(entries: Iterator[_Entry], limits: ExtractLimits, archive: Path) -> list[_Entry]:
    found: list[_Entry] = []
    total = 0
    for entry in entries:
        name = "/".join(entry.parts)
        first = entry.parts[0] if entry.parts else ""
        if first == "" or (len(first) == 2 and first[1] == ":"):
            raise UnsafeArchiveError(f"{archive.name}: refused: absolute path {name!r}")
        if ".." in entry.parts:
            raise UnsafeArchiveError(f"{archive.name}: refused: path with '..': {name!r}")
        total += max(entry.size, 0)
        if len(found) >= limits.max_members or total > limits.max_archive_bytes:
            raise UnsafeArchiveError(
                f"{archive.name}: refused: over {limits.max_members} entries or "
                f"{limits.max_archive_bytes // MIB} MiB unpacked"
            )
        parts = tuple(part for part in entry.parts if part not in ("", "."))
        if parts:
            found.append(_Entry(parts, entry.kind, entry.size, entry.open, entry.target))
    return found


def _docs_prefix(entries: list[_Entry], docs: tuple[str, ...], archive: Path) -> tuple[str, ...]:
    tops = {entry.parts[0] for entry in entries}
    candidates = [(*tops, *docs)] if len(tops) == 1 else []
    candidates.append(docs)
    for prefix in candidates:
        if any(e.parts[: len(prefix)] == prefix and len(e.parts) > len(prefix) for e in entries):
            return prefix
    where = f"{next(iter(tops))}/{'/'.join(docs)}/" if len(tops) == 1 else f"{'/'.join(docs)}/"
    raise DocsFolderMissingError(f"{archive.name} has no docs folder {where}")


def _select(
    entries: list[_Entry],
    prefix: tuple[str, ...],
    limits: ExtractLimits,
    archive: Path,
    skipped: dict[tuple[str, ...], str],
) -> list[_Entry]:
    """The docs folder's entries and the site config beside it, links materialised; refuses
    what cannot be safe and records the links it skips in ``skipped``."""
    parent = prefix[:-1]
    by_path = {entry.parts: entry for entry in entries}
    selected: list[_Entry] = []
    files = size = 0
    for entry in entries:
        in_docs = entry.parts[: len(prefix)] == prefix
        is_config = entry.parts[:-1] == parent and entry.parts[-1] in SITE_CONFIG_NAMES
        # The project's own top-level files decide how the site is built and what it shows:
        # .readthedocs.yaml names the Sphinx builder, pyproject.toml marks the project root,
        # and pages include CHANGES.md or README.md from beside the docs folder.
        beside_docs = entry.parts[:-1] == parent and entry.kind in ("file", "symlink")
        if not in_docs and not is_config and not beside_docs:
            continue
        name = "/".join(entry.parts)
        if entry.kind == "hardlink":
            raise UnsafeArchiveError(f"{archive.name}: refused: hard link {name!r}")
        if entry.kind == "special":
            raise UnsafeArchiveError(f"{archive.name}: refused: device or FIFO {name!r}")
        found = [entry]
        if entry.kind == "symlink":
            found, why = _materialise(entry, entries, by_path)
            if why:
                skipped[entry.parts] = why
        for item in found:
            if item.kind == "file":
                files += 1
                size += max(item.size, 0)
                _check_caps(files, size, limits, archive)
            selected.append(item)
    return selected


def _materialise(
    link: _Entry, entries: list[_Entry], by_path: dict[tuple[str, ...], _Entry]
) -> tuple[list[_Entry], str]:
    """What a symlink stands for, as entries at its own path (a copy of the file, or of the
    folder's files and folders), or none and why it is skipped."""
    current = link
    for _ in range(_MAX_LINK_HOPS):
        target = _link_target(current)
        if target is None:
            return [], f"link to {current.target!r} points outside the archive"
        if target == link.parts:
            break  # back to where it started
        if target == link.parts[: len(target)]:
            return [], f"link to {link.target!r} loops back to a folder that holds it"
        found = by_path.get(target)
        if found is not None and found.kind == "symlink":
            current = found
            continue
        if found is not None and found.kind == "file":
            return [_Entry(link.parts, "file", found.size, found.open)], ""
        inside = [e for e in entries if e.parts[: len(target)] == target and e.parts != target]
        if not inside and (found is None or found.kind != "dir"):
            return [], f"link to {link.target!r} dangles (no such entry in the archive)"
        copies = [
            _Entry(link.parts + e.parts[len(target) :], e.kind, e.size, e.open)
            for e in inside
            if e.kind in ("file", "dir")
        ]
        nested = len(copies) < len(inside)
        return [_Entry(link.parts, "dir", 0, link.open), *copies], (
            f"links inside the folder {link.target!r} were left out" if nested else ""
        )
    return [], f"link to {link.target!r} is a loop of links (or over {_MAX_LINK_HOPS} in a row)"


def _link_target(link: _Entry) -> tuple[str, ...] | None:
    """The archive path a symlink names, resolved by name from its folder; None when it is
    absolute or climbs above the archive's root."""
    raw = link.target.replace("\\", "/")
    if not raw or raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        return None
    parts = list(link.parts[:-1])
    for part in raw.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return tuple(parts)


def _write(
    entries: list[_Entry], strip: tuple[str, ...], root: Path, limits: ExtractLimits, archive: Path
) -> None:
    written = 0
    files = 0
    for entry in entries:
        target = root.joinpath(*entry.parts[len(strip) :])
        # Names were checked and no link is ever written, so this holds; it is cheap to prove.
        if not target.resolve().is_relative_to(root.resolve()):
            raise UnsafeArchiveError(f"{archive.name}: refused: {'/'.join(entry.parts)!r}")
        if entry.kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
            continue
        files += 1
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            out = target.open("xb")
        except FileExistsError:
            raise UnsafeArchiveError(
                f"{archive.name}: refused: duplicate entry {'/'.join(entry.parts)!r}"
            ) from None
        with out, entry.open() as source:
            # Count what actually comes out: a zip's declared sizes can lie.
            while block := source.read(_COPY_BLOCK):
                written += len(block)
                _check_caps(files, written, limits, archive)
                out.write(block)


def _check_caps(files: int, size: int, limits: ExtractLimits, archive: Path) -> None:
    if files > limits.max_files:
        raise UnsafeArchiveError(
            f"{archive.name}: refused: the docs folder has over {limits.max_files} files"
        )
    if size > limits.max_bytes:
        raise UnsafeArchiveError(
            f"{archive.name}: refused: the docs folder unpacks to over "
            f"{limits.max_bytes / MIB:g} MiB (a decompression bomb?)"
        )
