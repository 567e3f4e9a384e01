"""The diagnostics snapshot beyond rates and percentiles: latency means, per-window quality
(Top-K fill, citation coverage, rerank usage, filtered-query rate), the newest events, and
an alert when the history file cannot be written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from citewise import telemetry
from citewise.kb.diagnostics import HISTORY_FILE, AlertRules, DiagnosticsHistory, digest
from citewise.kb.diagnostics_quality import RECENT_EVENTS
from tests.kb_support import MakeKB, sections, upload

NOW = 1_800_000_000.0


def history(tmp_path: Path) -> DiagnosticsHistory:
    return DiagnosticsHistory(tmp_path / HISTORY_FILE, AlertRules(), clock=lambda: NOW)


def entry(op: str, *, stages: dict[str, float] | None = None, **values: float) -> dict[str, Any]:
    event: dict[str, Any] = {"t": NOW - 10, "op": op, "outcome": "ok", "seconds": 0.2}
    event["values"] = values
    if stages:
        event["stages"] = stages
    return event


def test_real_searches_give_top_k_fill_and_the_filtered_rate(
    make_kb: MakeKB, tmp_path: Path
) -> None:
    kb = make_kb()
    kb.add_documents([upload("keys.md", sections("Keys", "Rotate keys.", "Revoke keys."))])
    recorded = DiagnosticsHistory(tmp_path / HISTORY_FILE, AlertRules())
    with telemetry.listening(recorded):
        kb.search("keys", search_type="full_text", top_k=4)  # 3 sections hold it: 3 of 4
        kb.search("revoke keys", search_type="full_text", top_k=2, doc_ids=("keys.md",))
    snapshot = recorded.snapshot()
    quality = snapshot["windows"]["1m"]["quality"]
    assert quality["searches"] == 2
    assert quality["top_k_fill"] == pytest.approx((0.75 + 1.0) / 2)
    assert quality["filtered_rate"] == 0.5 and quality["rerank_rate"] == 0.0
    assert quality["citation_coverage"] is None  # no answer in the window
    latency = snapshot["windows"]["1m"]["operations"]["search"]["latency"]
    assert latency["mean"] is not None and latency["mean"] <= latency["max"]


def test_citation_coverage_and_rerank_rate_per_window(tmp_path: Path) -> None:
    recorded = history(tmp_path)
    for citations in (2, 0, 1, 3):
        recorded.append(entry("answer", citations=citations, hits=5))
    recorded.append(entry("search", stages={"dense": 0.01, "rerank": 0.1}, hits=5, top_k=5))
    recorded.append(entry("search", stages={"dense": 0.01}, hits=5, top_k=5))
    quality = recorded.snapshot()["windows"]["5m"]["quality"]
    assert quality["citation_coverage"] == 0.75 and quality["answers"] == 4
    assert quality["rerank_rate"] == 0.5 and quality["top_k_fill"] == 1.0


def test_the_snapshot_lists_the_newest_events_hashed(make_kb: MakeKB, tmp_path: Path) -> None:
    kb = make_kb()
    kb.add_documents([upload("keys.md", sections("Keys", "Rotate keys."))])
    recorded = history(tmp_path)
    for n in range(RECENT_EVENTS + 5):
        recorded.append(entry("search", hits=n, top_k=30))
    with telemetry.listening(recorded):
        kb.search("the secret rotation question", search_type="full_text")
    snapshot = recorded.snapshot()
    newest = snapshot["recent"]
    assert len(newest) == RECENT_EVENTS and snapshot["events"] == RECENT_EVENTS + 6
    assert newest[0]["op"] == "search" and newest[0]["subject"] == digest(
        "the secret rotation question"
    )
    assert "secret" not in str(newest)
    assert [e["values"]["hits"] for e in newest[1:]] == list(range(24, 5, -1))


def test_an_unwritable_history_alerts_and_keeps_the_events_in_memory(tmp_path: Path) -> None:
    recorded = history(tmp_path)
    recorded.append(entry("search", hits=1, top_k=1))
    # The file's temporary sibling is taken by a directory: every write now fails.
    blocker = tmp_path / f".{HISTORY_FILE}.{os.getpid()}.tmp"
    blocker.mkdir()
    with pytest.raises(OSError):
        recorded.append(entry("search", hits=2, top_k=1))
    snapshot = recorded.snapshot()
    [alert] = [a for a in snapshot["alerts"] if a["alert"] == "history_unwritable"]
    assert HISTORY_FILE in alert["message"] and "in memory" in alert["message"]
    assert [e["values"]["hits"] for e in snapshot["recent"]] == [2, 1]
    blocker.rmdir()  # writable again: the next snapshot writes what waited and clears it
    snapshot = recorded.snapshot()
    assert not [a for a in snapshot["alerts"] if a["alert"] == "history_unwritable"]
    assert [e["values"]["hits"] for e in history(tmp_path).events()] == [1, 2]
