"""The diagnostics history: a home's recent operations (ingest, search, answer, delete), kept
across restarts and summed up per time window, with the alerts they trip.

It is a :mod:`citewise.telemetry` observer: the server and the CLI send it their operations.
The file (``{home}/diagnostics.json``) holds at most :data:`MAX_EVENTS` events and
:data:`MAX_BYTES` bytes, written atomically under a file lock so the server and CLI commands
of one home can share it (:class:`citewise.kb.jsonfile.BoundedJSONFile`). It never holds
query text: what an operation was about (a query, a document id) is kept as a truncated
SHA-256 hash, and an error's message has it blanked out.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from citewise.config import Settings, environment
from citewise.errors import ConfigurationError
from citewise.kb.diagnostics_quality import quality, recent
from citewise.kb.jsonfile import BoundedJSONFile
from citewise.telemetry import OPERATION, Event

__all__ = [
    "HISTORY_FILE",
    "MAX_BYTES",
    "MAX_EVENTS",
    "WINDOWS",
    "AlertRules",
    "DiagnosticsHistory",
    "digest",
]

log = logging.getLogger(__name__)

HISTORY_FILE = "diagnostics.json"
MAX_EVENTS = 100
MAX_BYTES = 192 * 1024
WINDOWS = {"1m": 60, "5m": 300, "1h": 3600}
_CAUSE_CHARS = 300
# Operations are written at most this often (and before every read), so a benchmark's
# thousands of searches do not each rewrite the file.
FLUSH_SECONDS = 1.0
_DIGEST_CHARS = 16


def digest(text: str) -> str:
    """A truncated SHA-256 of ``text``: tells repeats apart without keeping the text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_DIGEST_CHARS]


@dataclass(frozen=True)
class AlertRules:
    """When an operation's numbers in ``window`` raise an alert (``CITEWISE_ALERT_*``).

    An alert needs at least ``min_events`` operations in the window, so one failure of a
    quiet server is not an outage.
    """

    error_rate: float = 0.2
    zero_result_rate: float = 0.5
    p95_seconds: float = 10.0
    min_events: int = 5
    window: str = "5m"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AlertRules:
        env = environment() if environ is None else environ
        values: dict[str, Any] = {}
        for name, kind in (("error_rate", float), ("zero_result_rate", float),
                           ("p95_seconds", float), ("min_events", int)):  # fmt: skip
            raw = env.get(f"CITEWISE_ALERT_{name.upper()}")
            if raw:
                try:
                    values[name] = kind(raw)
                except ValueError:
                    raise ConfigurationError(
                        f"CITEWISE_ALERT_{name.upper()} must be a number, not {raw!r}"
                    ) from None
                if values[name] < 0:
                    raise ConfigurationError(f"CITEWISE_ALERT_{name.upper()} must be ≥ 0")
        window = env.get("CITEWISE_ALERT_WINDOW") or cls.window
        if window not in WINDOWS:
            raise ConfigurationError(
                f"CITEWISE_ALERT_WINDOW must be one of {', '.join(WINDOWS)}, not {window!r}"
            )
        return cls(**values, window=window)


class DiagnosticsHistory:
    """The recent operations of one home, persisted in ``path``.

    Args:
        path: the history file (``{home}/diagnostics.json``).
        rules: alert thresholds (default: from ``CITEWISE_ALERT_*``).
        clock: seconds since the epoch (tests pass their own).
    """

    _shared: ClassVar[dict[Path, DiagnosticsHistory]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        path: Path,
        rules: AlertRules | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.rules = rules or AlertRules.from_env()
        self.clock = clock
        self._file = BoundedJSONFile(path, {"events": MAX_EVENTS}, MAX_BYTES)
        self._lock = threading.Lock()
        self._pending: list[dict[str, Any]] = []
        self._flushed = time.monotonic()
        self._unsaved = False
        # Why the last write failed (None: it did not): the ``history_unwritable`` alert.
        self.write_error: str | None = None

    @classmethod
    def of(cls, settings: Settings) -> DiagnosticsHistory:
        """The history of ``settings``' home, one object per process (the server and a CLI
        command in one process then record each operation once)."""
        path = (settings.home.expanduser() / HISTORY_FILE).resolve()
        with cls._shared_lock:
            history = cls._shared.get(path)
            if history is None:
                history = cls._shared[path] = cls(path)
                atexit.register(history.flush_quietly)
            return history

    def flush_quietly(self) -> None:
        """:meth:`flush`, a failure to write logged once instead of raised: a full disk
        (while observing, at a command's end, at exit) costs diagnostics, never a traceback
        around the command's own one-line error."""
        try:
            self.flush()
        except OSError as error:
            if not self._unsaved:
                log.warning("diagnostics not saved (%s): %s", self.path, error.strerror)
            self._unsaved = True

    # -- recording -------------------------------------------------------------------------

    def observe(self, event: Event) -> None:
        """Keep an operation (the telemetry observer's entry point); stages arrive inside
        their operation's event."""
        if event.kind != OPERATION:
            return
        entry = entry_of(event, self.clock())
        with self._lock:
            self._pending.append(entry)
            due = time.monotonic() - self._flushed >= FLUSH_SECONDS
        if due:
            self.flush_quietly()

    def append(self, entry: Mapping[str, Any]) -> None:
        """Keep ``entry`` and write the file now."""
        with self._lock:
            self._pending.append(dict(entry))
        self.flush()

    def flush(self) -> None:
        """Write the operations kept in memory (merged with what other processes wrote)."""
        with self._file.locked():
            self._flush_locked()

    def _flush_locked(self) -> list[dict[str, Any]]:
        events = self._file.read()["events"]
        with self._lock:
            pending = list(self._pending)
        if pending:
            try:
                events = self._file.write({"events": [*events, *pending]})["events"]
            except OSError as error:
                # Kept in memory for the next flush, within the file's own bound.
                with self._lock:
                    self._pending[:] = self._pending[-MAX_EVENTS:]
                self.write_error = error.strerror or str(error)
                raise
            with self._lock:
                del self._pending[: len(pending)]  # not the ones recorded meanwhile
            self.write_error = None
            self._unsaved = False
        self._flushed = time.monotonic()
        return events

    def _readable_events(self) -> list[dict[str, Any]]:
        """:meth:`events`, or when the file cannot be written, what it holds and what is
        waiting in memory (the snapshot then alerts instead of failing)."""
        try:
            return self.events()
        except OSError as error:
            self.write_error = error.strerror or str(error)
            with self._lock:
                waiting = [*self._file.read()["events"], *self._pending]
            return self._file.bounded({"events": waiting})["events"]

    def events(self) -> list[dict[str, Any]]:
        """The kept events, oldest first."""
        with self._file.locked():
            return self._flush_locked()

    def clear(self) -> int:
        """Forget every event; how many there were."""
        with self._file.locked():
            count = len(self._flush_locked())
            self._file.write({"events": []})
            return count

    # -- reading ---------------------------------------------------------------------------

    def snapshot(self, now: float | None = None) -> dict[str, Any]:
        """Per window (1m, 5m, 1h): each operation's rate, error rate, zero-result rate and
        latency percentiles and mean, its stages' latencies, and the window's quality
        (``diagnostics_quality.quality``); the newest events (``recent``); then the alerts."""
        now = self.clock() if now is None else now
        events = self._readable_events()
        windows = {}
        for name, seconds in WINDOWS.items():
            within = [e for e in events if e.get("t", 0) >= now - seconds]
            windows[name] = {**_window(within, seconds), "quality": quality(within)}
        return {
            "object": "diagnostics",
            "generated_at": round(now, 3),
            "events": len(events),
            "limits": {"events": MAX_EVENTS, "bytes": MAX_BYTES},
            "windows": windows,
            "recent": recent(events),
            "alerts": self.alerts(windows),
            "rules": asdict(self.rules),
        }

    def export(self, now: float | None = None) -> dict[str, Any]:
        """The snapshot and the events it was computed from (hashes, never query text)."""
        return {**self.snapshot(now), "history": self.events()}

    def alerts(self, windows: Mapping[str, Any]) -> list[dict[str, Any]]:
        rules = self.rules
        window = rules.window
        alerts: list[dict[str, Any]] = []
        if self.write_error is not None:
            alerts.append({
                "alert": "history_unwritable", "operation": None, "window": None, "count": None,
                "value": None, "threshold": None,
                "message": f"the diagnostics history cannot be written ({self.path}: "
                f"{self.write_error}); the newest operations are kept in memory only",
            })  # fmt: skip
        for name, stats in windows[window]["operations"].items():
            count = stats["count"]
            if count < rules.min_events:
                continue
            checks = [
                ("error_rate", stats["error_rate"], rules.error_rate, "failed"),
                ("zero_result_rate", stats.get("zero_result_rate"), rules.zero_result_rate,
                 "found nothing"),
                ("p95_latency", stats["latency"]["p95"], rules.p95_seconds, "p95 latency"),
            ]  # fmt: skip
            for alert, value, threshold, what in checks:
                if value is None or value <= threshold:
                    continue
                if alert == "p95_latency":
                    text = f"{name}: {what} {value:.2f}s > {threshold:g}s"
                else:
                    text = f"{name}: {value:.0%} {what} (> {threshold:.0%})"
                alerts.append({
                    "alert": alert, "operation": name, "window": window, "count": count,
                    "value": value, "threshold": threshold,
                    "message": f"{text} over the last {window}, based on {count} operations",
                })  # fmt: skip
        return alerts


def entry_of(event: Event, now: float) -> dict[str, Any]:
    """An operation event as a history entry: no query text, the subject hashed."""
    entry: dict[str, Any] = {
        "t": round(now, 3),
        "op": event.name,
        "outcome": event.outcome,
        "seconds": round(event.seconds, 6),
        **{key: value for key, value in event.labels.items() if key in ("kb", "model", "kind")},
    }
    if event.stages:
        entry["stages"] = {name: round(s, 6) for name, s in event.stages.items()}
    if event.values:
        entry["values"] = {name: round(v, 6) for name, v in event.values.items()}
    if event.subject:
        entry["subject"] = digest(event.subject)
    if event.error:
        entry["error"] = event.error
        cause = event.cause or ""
        if event.subject:
            cause = cause.replace(event.subject, "[…]")
        entry["cause"] = cause[:_CAUSE_CHARS]
    return entry


def _percentile(ordered: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ordered, non-empty list."""
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def _latency(seconds: list[float]) -> dict[str, float | None]:
    if not seconds:
        return {"mean": None, "p50": None, "p95": None, "p99": None, "max": None}
    ordered = sorted(seconds)
    return {
        "mean": round(sum(ordered) / len(ordered), 6),
        "p50": round(_percentile(ordered, 0.50), 6),
        "p95": round(_percentile(ordered, 0.95), 6),
        "p99": round(_percentile(ordered, 0.99), 6),
        "max": round(ordered[-1], 6),
    }


def _window(events: list[dict[str, Any]], seconds: int) -> dict[str, Any]:
    by_operation: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_operation.setdefault(str(event.get("op")), []).append(event)
    operations = {}
    for name, group in sorted(by_operation.items()):
        count = len(group)
        errors = sum(1 for e in group if e.get("outcome") == "error")
        stats: dict[str, Any] = {
            "count": count,
            "rate_per_minute": round(count * 60 / seconds, 4),
            "errors": errors,
            "error_rate": round(errors / count, 4),
            "latency": _latency([float(e.get("seconds", 0)) for e in group]),
        }
        if name == "search":
            done = [e for e in group if e.get("outcome") == "ok"]
            zero = sum(1 for e in done if e.get("values", {}).get("hits", 1) == 0)
            stats["zero_results"] = zero
            stats["zero_result_rate"] = round(zero / len(done), 4) if done else None
        stages: dict[str, list[float]] = {}
        for event in group:
            for stage, spent in (event.get("stages") or {}).items():
                stages.setdefault(stage, []).append(float(spent))
        stats["stages"] = {stage: _latency(spent) for stage, spent in sorted(stages.items())}
        operations[name] = stats
    return {"seconds": seconds, "count": len(events), "operations": operations}
