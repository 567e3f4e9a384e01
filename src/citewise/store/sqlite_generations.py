"""Atomic rebuilds of a SQLite knowledge base: each build a file of its own, switched in by a link.

A rebuild writes the new knowledge base into ``.generations/{kb}/{token}/{kb}.sqlite`` beside
the current one, checkpoints and syncs it, and then replaces ``{kb}.sqlite`` by a symbolic
link to it in one ``rename``: a kill at any moment leaves the old knowledge base or the new
one, and a reader opens one or the other, never neither and never a part.

Why a link and not ``os.replace`` of the file itself: SQLite names a database's ``-wal`` and
``-shm`` files after its path (after resolving links). A file renamed over a live WAL
database would be paired with the old database's WAL and shared-memory index by every
process that opens it next, replaying the old file's pages onto the new one. Each generation
in its own folder has its own WAL and index; readers holding the old file keep their open
handles and reopen when they see another file (``SQLiteStore._conn`` compares inodes).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import uuid
from pathlib import Path

from citewise.errors import StorageError
from citewise.store import ann

__all__ = ["GENERATIONS", "discard", "finish", "new_folder", "remove_all", "remove_stale", "switch"]

# The folder (under the store's root) holding every rebuilt knowledge base's files.
GENERATIONS = ".generations"


def _folder(root: Path, kb: str) -> Path:
    return root / GENERATIONS / kb


def new_folder(root: Path, kb: str) -> Path:
    """A fresh, empty folder for the next generation of ``kb``."""
    folder = _folder(root, kb) / uuid.uuid4().hex
    try:
        folder.mkdir(parents=True)
    except OSError as error:
        raise StorageError(
            f"cannot create a new index for {kb!r} ({error.strerror}: is the disk full?)"
        ) from error
    return folder


def _current(path: Path) -> Path | None:
    """The generation folder ``path`` links to (None: a plain file, or nothing)."""
    if not path.is_symlink():
        return None
    return path.resolve().parent


def remove_stale(root: Path, kb: str, path: Path) -> None:
    """Delete the generations of ``kb`` that ``path`` does not link to (left by a killed
    rebuild, or replaced by the last one). Readers still holding one keep their open files."""
    keep = _current(path)
    folder = _folder(root, kb)
    if not folder.is_dir():
        return
    for child in folder.iterdir():
        if child != keep:
            shutil.rmtree(child, ignore_errors=True)


def discard(root: Path, kb: str, folder: Path) -> None:
    """Delete an unfinished generation, and the folders holding it if it was the only one."""
    shutil.rmtree(folder, ignore_errors=True)
    for empty in (_folder(root, kb), root / GENERATIONS):
        try:
            empty.rmdir()
        except OSError:  # not empty (or gone): leave it
            return


def remove_all(root: Path, kb: str) -> None:
    """Delete every generation of ``kb`` (when it is dropped)."""
    shutil.rmtree(_folder(root, kb), ignore_errors=True)
    with contextlib.suppress(OSError):
        (root / GENERATIONS).rmdir()  # only when empty


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def finish(conn: sqlite3.Connection, db: Path, kb: str) -> None:
    """Make the newly written ``db`` complete on its own: a WAL file again (its staging store
    wrote it without one), every page checkpointed out of the WAL into the file (then
    empty), the file and its folder synced to disk."""
    try:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        busy = busy or mode != "wal"
    except sqlite3.Error as error:
        raise StorageError(
            f"the new index of {kb!r} could not be written ({error}: is the disk full?); "
            "what was stored before is intact"
        ) from error
    finally:
        conn.close()
    if busy:
        raise StorageError(f"the new index of {kb!r} is still in use: it was not switched in")
    try:
        _fsync(db)
        _fsync(db.parent)
    except OSError as error:
        raise StorageError(
            f"the new index of {kb!r} could not be synced ({error.strerror}); "
            "what was stored before is intact"
        ) from error


def switch(root: Path, kb: str, path: Path, db: Path) -> None:
    """Make ``path`` (``{kb}.sqlite``) name the finished ``db`` in one rename, then delete
    what it named before (a plain file from before rebuilds, or the previous generation)."""
    previous = _current(path)
    plain = path.is_file() and not path.is_symlink()
    link = root / f".{kb}.{uuid.uuid4().hex}.link"
    try:
        os.symlink(os.path.relpath(db, root), link)
        os.replace(link, path)
        _fsync(root)
    except OSError as error:
        link.unlink(missing_ok=True)
        raise StorageError(
            f"the new index of {kb!r} could not be switched in ({error.strerror}: is the disk "
            "full?); what was stored before is intact"
        ) from error
    # From here on every new reader opens the new file. Readers in other processes still
    # reading the old one keep their handles (the files stay until they close them).
    if previous is not None:
        shutil.rmtree(previous, ignore_errors=True)
    if plain:
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        ann.remove_files(path)
