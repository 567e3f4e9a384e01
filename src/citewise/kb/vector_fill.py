"""Vectors computed after the text is stored: a knowledge base written text first (keyword
search works at once) gets its chunks embedded in batches, each batch written on its own,
so an interrupted run resumes with just the chunks still without vectors.

:func:`embed_missing` is the work (under the caller's write lock); :func:`start` runs it in
a background thread of this process and :func:`progress` reports it for the status line
("indexing N of M sections").
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from citewise import telemetry
from citewise.models import Chunk
from citewise.store.base import KBStore, VectorsLater, vectors_missing

if TYPE_CHECKING:
    from citewise.config import Settings
    from citewise.embedding.base import Vectors

__all__ = ["FillState", "Fillable", "embed_missing", "progress", "start", "status_line"]

log = logging.getLogger(__name__)

# Chunks embedded per transaction: as the ingest batches (kb/ingest.py EMBED_BATCH_CHUNKS).
FILL_BATCH_CHUNKS = 256


def embed_missing(
    handle: KBStore,
    embed: Callable[[Sequence[Chunk]], Mapping[str, Vectors]],
    on_batch: Callable[[int, int], None] | None = None,
    *,
    batch: int = FILL_BATCH_CHUNKS,
) -> int:
    """Embed every chunk of ``handle`` still without vectors (``embed``: their vectors by
    chunk id), ``batch`` at a time, each batch one write; returns the number of chunks
    embedded (0 for a complete knowledge base or an engine that never defers).
    ``on_batch(done, total)`` after each write.

    The caller holds the knowledge base's write lock. A failure leaves the batches written
    so far (and keyword search) as they are; the next call embeds only what is left.
    """
    if not isinstance(handle, VectorsLater):
        return 0
    total = handle.vectors_missing()
    done = 0
    while total and done < total:
        chunks = handle.without_vectors(batch)
        if not chunks:
            break
        with telemetry.stage("embed"):
            vectors = embed(chunks)
        remaining = handle.fill_vectors(vectors)
        done = total - remaining
        if on_batch is not None:
            on_batch(done, total)
        if len(vectors) < len(chunks):  # a chunk with nothing to embed would loop forever
            break
    return done


@dataclass
class FillState:
    """A background fill of one knowledge base: chunks embedded of the total, and how it
    ended (``error`` names why it stopped; None while running or once complete)."""

    done: int = 0
    total: int = 0
    running: bool = True
    error: str | None = None


class Fillable(Protocol):
    """What a background fill needs of a knowledge base (a ``KnowledgeBase``)."""

    @property
    def name(self) -> str: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def store(self) -> KBStore: ...

    def complete_vectors(self, on_batch: Callable[[int, int], None] | None = None) -> int: ...


_FILLS: dict[tuple[Path, str], FillState] = {}
_FILLS_LOCK = threading.Lock()


def _key(kb: Fillable) -> tuple[Path, str]:
    return (kb.settings.home.expanduser().resolve(), kb.name)


def progress(kb: Fillable) -> FillState | None:
    """This process's fill of ``kb`` (running, stopped by an error, or done); None if none
    was started here."""
    with _FILLS_LOCK:
        return _FILLS.get(_key(kb))


def start(kb: Fillable, handle: KBStore | None = None) -> FillState | None:
    """Embed ``kb``'s chunks still without vectors in a background thread (one per knowledge
    base and process; one that stopped on an error is not retried here: ``citewise index``
    completes it). None when nothing is missing."""
    handle = handle if handle is not None else kb.store  # a request's, when it has one
    missing = vectors_missing(handle)
    with _FILLS_LOCK:
        state = _FILLS.get(_key(kb))
        if state is not None and (state.running or state.error is not None):
            return state
        if not missing:
            return state
        state = _FILLS[_key(kb)] = FillState(total=missing)

    def counted(done: int, total: int) -> None:
        state.done, state.total = done, total

    def run() -> None:
        try:
            kb.complete_vectors(counted)
        except Exception as error:  # the thread's end: keyword search stays, named why
            state.error = f"{type(error).__name__}: {error}"
            log.warning("embedding %r stopped: %s (keyword search only)", kb.name, error)
        finally:
            state.running = False

    threading.Thread(target=run, name=f"citewise-embed-{kb.name}", daemon=True).start()
    return state


def status_line(kb: Fillable, label: str, handle: KBStore | None = None) -> str | None:
    """The status line of ``kb`` (shown as ``label``) while its vectors are being computed
    (its searches are keyword-only meanwhile) or once that stopped on an error; None when
    it is complete. Starts the fill if none runs in this process (a restarted server).
    ``handle``: ``kb``'s store handle when the caller has it open already."""
    state = start(kb, handle)
    if state is None or not (state.running or state.error):
        return None
    if state.error is not None:
        return f"Indexing {label} stopped ({state.error}): searching by keywords only"
    return (
        f"Indexing {label}: {state.done} of {state.total} sections embedded, "
        "searching by keywords meanwhile"
    )
