"""`citewise diagnostics`: the diagnostics history of a local home (windows, alerts, export),
and the observer every command records its operations with."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from citewise import telemetry
from citewise.cli.common import Subcommands, print_json
from citewise.config import Settings
from citewise.kb.diagnostics import WINDOWS, DiagnosticsHistory
from citewise.kb.feedback import FeedbackStore

__all__ = ["add_diagnostics_command", "recording"]


@contextmanager
def recording(settings: Settings) -> Iterator[None]:
    """Record the operations of the ``with`` body (an ingest, a search…) in the home's
    diagnostics history."""
    history = DiagnosticsHistory.of(settings)
    try:
        with telemetry.listening(history):
            yield
    finally:
        history.flush_quietly()


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f}"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def render(snapshot: dict[str, Any]) -> str:
    """The snapshot as text: per window, one line per operation and its stages."""
    lines = [f"{snapshot['events']} events kept (at most {snapshot['limits']['events']})"]
    for name, window in snapshot["windows"].items():
        lines.append(f"\nlast {name}: {window['count']} operations")
        if not window["operations"]:
            continue
        lines.append(
            f"  {'operation':<18}{'count':>6}{'/min':>8}{'errors':>8}{'zero':>7}"
            f"{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}"
        )
        for op, stats in window["operations"].items():
            rows = [(op, stats, True)]
            rows += [(f"  {stage}", lat, False) for stage, lat in stats["stages"].items()]
            for label, row, top in rows:
                latency = row["latency"] if top else row
                head = (
                    f"{row['count']:>6}{row['rate_per_minute']:>8.2f}{_rate(row['error_rate']):>8}"
                    f"{_rate(row.get('zero_result_rate')):>7}"
                    if top
                    else " " * 29
                )
                lines.append(
                    f"  {label:<18}{head}{_ms(latency['p50']):>9}{_ms(latency['p95']):>9}"
                    f"{_ms(latency['p99']):>9}{_ms(latency['max']):>9}"
                )
    alerts = snapshot["alerts"]
    lines.append("\nalerts: none" if not alerts else "\nalerts:")
    lines += [f"  [{alert['alert']}] {alert['message']}" for alert in alerts]
    feedback = snapshot.get("feedback")
    if feedback is not None:
        rates = " · ".join(
            f"{name} {_rate(w['helpful_rate'])} of {w['ratings']}"
            for name, w in feedback["windows"].items()
        )
        lines.append(f"\nfeedback: helpful {rates}")
        for row in feedback["worst"][:5]:
            question = row.get("question") or f"#{row['question_hash']}"
            cited = ", ".join(s["url"] for s in row["sections"][:3]) or "no sections"
            lines.append(f"  {row['down']} down, {row['up']} up  [{row['kb']}] {question}: {cited}")
    return "\n".join(lines)


def cmd_diagnostics(args: argparse.Namespace, settings: Settings) -> int:
    history = DiagnosticsHistory.of(settings)
    if args.clear:
        print(f"cleared {history.clear()} events")
        return 0
    feedback = FeedbackStore.of(settings)
    if args.export:
        payload = {**history.export(), "feedback": feedback.export()}
        Path(args.export).write_text(json.dumps(payload, indent=2), encoding="utf-8")
        print(f"exported {len(history.events())} events to {args.export}")
        return 0
    snapshot = {**history.snapshot(), "feedback": feedback.summary()}
    if args.json:
        print_json(snapshot)
    else:
        print(render(snapshot))
    return 0


def add_diagnostics_command(commands: Subcommands) -> None:
    """``citewise diagnostics``."""
    sub = commands.add_parser(
        "diagnostics",
        help="recent operations of this home: rates, errors, latency, alerts",
        description=f"Windows: {', '.join(WINDOWS)}. Queries are kept only as hashes.",
    )
    sub.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    sub.add_argument("--export", metavar="FILE", help="write the snapshot and the events")
    sub.add_argument("--clear", action="store_true", help="forget the recorded events")
    sub.set_defaults(run=cmd_diagnostics)
