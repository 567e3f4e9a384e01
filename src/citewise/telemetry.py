"""The instrumentation seam: stages time their work and report it here; observers listen.

The stages (retrieval, ingest, the graph's nodes) and the service layer call :func:`stage`,
:func:`operation` and :func:`record`; they never import the server. Observers subscribe for a
block of work (:func:`listening`, what the server does per request, so two apps in one process
never count each other's work) or for the whole process (:func:`observe`, what the CLI does).
The server's Prometheus metrics, the diagnostics history and OpenTelemetry traces are such
observers. With nobody listening a block costs a context-variable lookup and two clock reads.

Labels must stay bounded (knowledge-base names, workflow names, outcomes): query text goes in
an event's ``subject`` only, which observers that store events hash.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, TypeGuard, runtime_checkable

__all__ = [
    "OPERATION",
    "RECORD",
    "STAGE",
    "Event",
    "Observer",
    "Span",
    "Tracing",
    "listening",
    "observe",
    "operation",
    "record",
    "stage",
    "traces",
]

OPERATION = "operation"  # what a user asked for: ingest, search, answer, delete
STAGE = "stage"  # a timed part of an operation: dense, keyword, parse, embed…
RECORD = "record"  # a fact without a block: a model call's tokens

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    """One finished block (or recorded fact).

    ``labels`` are bounded (they become metric labels); ``values`` are numbers (hits,
    tokens, the offset of the first token); ``stages`` sums the seconds of the stages run
    inside an operation, by name. ``error`` is the exception's class name and ``cause`` its
    message; ``subject`` is what the operation was about (a query, a document id), never a
    label: observers that keep it must hash it.
    """

    name: str
    kind: str
    labels: Mapping[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    started: float = 0.0  # time.perf_counter() when the block began
    values: Mapping[str, float] = field(default_factory=dict)
    stages: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None
    cause: str | None = None
    subject: str | None = None
    within: str | None = None  # the enclosing operation's name

    @property
    def outcome(self) -> str:
        if self.error is None:
            return "ok"
        return "cancelled" if self.error in _CANCELLED else "error"


_CANCELLED = frozenset({"CancelledError", "GeneratorExit"})


@runtime_checkable
class Observer(Protocol):
    """Receives every finished event; it must be quick and must not raise."""

    def observe(self, event: Event) -> None: ...


@runtime_checkable
class Tracing(Protocol):
    """An observer that also wraps each block (a trace span around it)."""

    def span(self, name: str, labels: Mapping[str, str]) -> AbstractContextManager[None]: ...


_GLOBAL: list[Observer] = []
_GLOBAL_LOCK = threading.Lock()
_LOCAL: ContextVar[tuple[Observer, ...]] = ContextVar("citewise_observers", default=())
_CURRENT: ContextVar[Span | None] = ContextVar("citewise_span", default=None)


def _observers() -> tuple[Observer, ...]:
    local = _LOCAL.get()
    return (*_GLOBAL, *local) if _GLOBAL else local


@contextmanager
def listening(*observers: Observer) -> Iterator[None]:
    """Send the events of the ``with`` body (and the tasks and threads it starts with a copy
    of its context, as ``asyncio`` does) to ``observers`` too."""
    current = _LOCAL.get()
    # Listening twice (a CLI command that serves) must not count each event twice.
    added = tuple(o for o in observers if not any(o is c for c in (*_GLOBAL, *current)))
    token = _LOCAL.set((*current, *added))
    try:
        yield
    finally:
        _reset(_LOCAL, token)


def observe(observer: Observer) -> Callable[[], None]:
    """Send every event of the process to ``observer``; returns what unsubscribes it."""
    with _GLOBAL_LOCK:
        _GLOBAL.append(observer)

    def stop() -> None:
        with _GLOBAL_LOCK:
            if observer in _GLOBAL:
                _GLOBAL.remove(observer)

    return stop


def _emit(observers: tuple[Observer, ...], event: Event) -> None:
    for observer in observers:
        try:
            observer.observe(event)
        except Exception:  # an observer's bug must never fail the work it watches
            log.exception("telemetry observer %r failed", observer)


class Span:
    """An open block: add values (:meth:`set`), note a moment (:meth:`mark`), name a subject."""

    def __init__(self, name: str, kind: str, labels: dict[str, str], parent: Span | None) -> None:
        self.name = name
        self.kind = kind
        self.parent = parent
        # A stage inherits its operation's labels (the knowledge base), so it need not know them.
        self.labels: dict[str, str] = (
            {**parent.labels, **labels} if parent is not None else dict(labels)
        )
        self.values: dict[str, float] = {}
        self.stages: dict[str, float] = {}
        self.subject: str | None = None
        self.started = time.perf_counter()
        self._lock = threading.Lock()

    def set(self, **values: float) -> None:
        self.values.update(values)

    def label(self, **labels: str) -> None:
        self.labels.update(labels)

    def mark(self, name: str) -> None:
        """Record ``name`` as seconds since the block began (the first time only)."""
        self.values.setdefault(name, time.perf_counter() - self.started)

    def _add_stage(self, name: str, seconds: float) -> None:
        with self._lock:  # parallel searches of one answer finish on different threads
            self.stages[name] = self.stages.get(name, 0.0) + seconds

    def operation(self) -> Span | None:
        span: Span | None = self
        while span is not None and span.kind != OPERATION:
            span = span.parent
        return span


class _Block:
    """A block being timed: what :func:`stage` and :func:`operation` return. A class rather
    than a generator context manager: a block nobody listens to costs about half as much
    (0.9 µs, not 1.6), and an ingest times two stages per document (SciFact's 5,183
    documents: 17 ms of CPU in these blocks, 9 ms now)."""

    __slots__ = ("_kind", "_labels", "_name", "_observers", "_span", "_stack", "_subject", "_token")

    def __init__(self, name: str, kind: str, labels: dict[str, str], subject: str | None) -> None:
        self._name = name
        self._kind = kind
        self._labels = labels
        self._subject = subject
        self._observers: tuple[Observer, ...] = ()
        self._stack: ExitStack | None = None

    def __enter__(self) -> Span:
        span = self._span = Span(self._name, self._kind, self._labels, _CURRENT.get())
        span.subject = self._subject
        observers = self._observers = _observers()
        if not observers:
            return span
        self._token = _CURRENT.set(span)
        tracing = [observer for observer in observers if traces(observer)]
        if tracing:
            stack = self._stack = ExitStack()
            try:
                for observer in tracing:
                    stack.enter_context(observer.span(self._name, span.labels))
            except BaseException as raised:
                # The body never runs: its block still ends, reported without an error.
                self._stack = None
                try:
                    stack.__exit__(type(raised), raised, raised.__traceback__)
                finally:
                    self._end(None)
                raise
        return span

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> bool:
        if not self._observers:
            return False
        suppressed = False
        try:
            if self._stack is not None:
                suppressed = bool(self._stack.__exit__(kind, error, trace))
        finally:
            self._end(error)
        return suppressed

    def _end(self, error: BaseException | None) -> None:
        span = self._span
        _reset(_CURRENT, self._token)
        seconds = time.perf_counter() - span.started
        # A stage counts toward its operation; a search run to answer counts toward the answer.
        parent = span.parent
        owner = parent.operation() if parent is not None else None
        if owner is not None:
            owner._add_stage(self._name, seconds)
        event = Event(
            name=self._name,
            kind=self._kind,
            labels=dict(span.labels),
            seconds=seconds,
            started=span.started,
            values=dict(span.values),
            stages=dict(span.stages),
            error=type(error).__name__ if error is not None else None,
            cause=_cause(error),
            subject=span.subject,
            within=owner.name if owner is not None else None,
        )
        _emit(self._observers, event)


def _cause(error: BaseException | None) -> str | None:
    if error is None:
        return None
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def stage(name: str, **labels: str) -> AbstractContextManager[Span]:
    """Time the ``with`` body as stage ``name`` of the current operation."""
    return _Block(name, STAGE, labels, None)


def operation(name: str, subject: str | None = None, **labels: str) -> AbstractContextManager[Span]:
    """Time the ``with`` body as operation ``name`` (``subject``: what it was about, such as
    the query, for observers that hash it)."""
    return _Block(name, OPERATION, labels, subject)


def traces(observer: Observer) -> TypeGuard[Tracing]:
    """Whether ``observer`` also wraps blocks (:class:`Tracing`). A plain attribute check:
    ``isinstance`` against a runtime-checkable protocol costs microseconds per block."""
    return callable(getattr(observer, "span", None))


def record(name: str, *, seconds: float = 0.0, error: str | None = None, cause: str | None = None,
           values: Mapping[str, float] | None = None, **labels: str) -> None:  # fmt: skip
    """Report a fact that is not a block of this thread's work (a model call's tokens)."""
    observers = _observers()
    if not observers:
        return
    parent = _CURRENT.get()
    merged = {**(parent.labels if parent is not None else {}), **labels}
    owner = parent.operation() if parent is not None else None
    event = Event(
        name, RECORD, merged, seconds, time.perf_counter() - seconds, dict(values or {}),
        error=error, cause=cause, within=owner.name if owner is not None else None,
    )  # fmt: skip
    _emit(observers, event)


def _reset(var: ContextVar[Any], token: Token[Any]) -> None:
    try:
        var.reset(token)
    except ValueError:
        # An async generator closed from another context (a client that went away): the
        # context it set the variable in is gone with it.
        pass
