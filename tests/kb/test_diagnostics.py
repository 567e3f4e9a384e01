"""The diagnostics history: bounded, hashed, persisted across restarts; windows and alerts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from citewise import telemetry
from citewise.config import Settings
from citewise.errors import ConfigurationError
from citewise.kb.diagnostics import (
    HISTORY_FILE,
    MAX_BYTES,
    MAX_EVENTS,
    AlertRules,
    DiagnosticsHistory,
    digest,
)
from tests.kb_support import MakeKB, sections, upload

QUERY = "how do I rotate the production signing key"
NOW = 1_800_000_000.0


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def history(tmp_path: Path, clock: Clock | None = None, **rules: Any) -> DiagnosticsHistory:
    path = tmp_path / HISTORY_FILE
    return DiagnosticsHistory(path, AlertRules(**rules), clock=clock or Clock())


def operation(
    name: str, seconds: float, *, outcome: str = "ok", t: float = NOW, **values: float
) -> dict[str, Any]:
    return {"t": t, "op": name, "outcome": outcome, "seconds": seconds, "kb": "docs",
            "values": values}  # fmt: skip


def test_a_real_search_is_kept_hashed_and_survives_a_restart(
    make_kb: MakeKB, tmp_path: Path
) -> None:
    kb = make_kb()
    kb.add_documents([upload("keys.md", sections("Keys", "Rotate keys with the admin tool."))])
    recorded = history(tmp_path)
    with telemetry.listening(recorded):
        kb.search(QUERY)
        kb.search("zzzz qqqq", search_type="full_text")
    recorded.flush()  # the process does it at exit (and at most once a second meanwhile)
    text = (tmp_path / HISTORY_FILE).read_text()
    assert QUERY not in text and "rotate" not in text and "zzzz" not in text
    assert digest(QUERY) in text

    restarted = history(tmp_path)  # a new process reading the same home
    found, empty = restarted.events()
    assert (found["op"], found["kb"], found["outcome"]) == ("search", "files", "ok")
    assert found["subject"] == digest(QUERY) and len(found["subject"]) == 16
    assert {"embed_query", "dense", "keyword", "fuse"} <= set(found["stages"])
    assert empty["values"]["hits"] == 0


def test_a_failure_keeps_its_cause_without_the_query(tmp_path: Path) -> None:
    recorded = history(tmp_path)
    with telemetry.listening(recorded), pytest.raises(ValueError):
        with telemetry.operation("search", QUERY, kb="docs"):
            raise ValueError(f"cannot parse {QUERY!r}")
    (event,) = recorded.events()
    assert event["outcome"] == "error" and event["error"] == "ValueError"
    assert QUERY not in json.dumps(event) and "cannot parse" in event["cause"]


def test_the_history_keeps_the_newest_100_events(tmp_path: Path) -> None:
    recorded = history(tmp_path)
    for n in range(MAX_EVENTS + 30):
        recorded.append(operation("search", n / 1000, hits=n))
    events = recorded.events()
    assert len(events) == MAX_EVENTS
    assert events[0]["values"]["hits"] == 30 and events[-1]["values"]["hits"] == 129


def test_the_history_stays_under_192_kib(tmp_path: Path) -> None:
    recorded = history(tmp_path)
    wide = {f"stage_{n}": 0.5 for n in range(150)}  # about 3 KiB an event
    for n in range(MAX_EVENTS):
        recorded.append({**operation("answer", 1.0, hits=n), "stages": wide})
    size = (tmp_path / HISTORY_FILE).stat().st_size
    events = recorded.events()
    assert size <= MAX_BYTES == 192 * 1024
    assert 40 < len(events) < MAX_EVENTS and events[-1]["values"]["hits"] == MAX_EVENTS - 1


def test_windows_give_rates_error_and_zero_rates_and_percentiles(tmp_path: Path) -> None:
    clock = Clock()
    recorded = history(tmp_path, clock)
    for n in range(1, 11):  # ten searches in the last minute: 0.1 s … 1.0 s, two found nothing
        recorded.append(operation("search", n / 10, t=NOW - 30, hits=0 if n <= 2 else 5))
    recorded.append(operation("answer", 3.0, outcome="error", t=NOW - 200))
    recorded.append(operation("ingest", 9.0, t=NOW - 1800))
    recorded.append(operation("ingest", 9.0, t=NOW - 7200))  # older than every window
    windows = recorded.snapshot()["windows"]

    search = windows["1m"]["operations"]["search"]
    assert search["count"] == 10 and search["rate_per_minute"] == 10
    assert search["zero_results"] == 2 and search["zero_result_rate"] == 0.2
    assert search["latency"] == {"mean": 0.55, "p50": 0.5, "p95": 1.0, "p99": 1.0, "max": 1.0}
    assert set(windows["1m"]["operations"]) == {"search"}
    answer = windows["5m"]["operations"]["answer"]
    assert answer["errors"] == 1 and answer["error_rate"] == 1.0
    assert windows["1h"]["count"] == 12 and windows["1h"]["operations"]["ingest"]["count"] == 1
    assert windows["1h"]["operations"]["search"]["rate_per_minute"] == pytest.approx(
        10 / 60, abs=1e-4
    )


def test_stage_latencies_per_operation(tmp_path: Path) -> None:
    recorded = history(tmp_path)
    for n in (1, 2, 3, 4):
        recorded.append({**operation("search", n), "stages": {"dense": n / 10, "keyword": 0.01}})
    stages = recorded.snapshot()["windows"]["1m"]["operations"]["search"]["stages"]
    assert stages["dense"] == {"mean": 0.25, "p50": 0.2, "p95": 0.4, "p99": 0.4, "max": 0.4}
    assert stages["keyword"]["max"] == 0.01


def test_alerts_state_their_window_and_count(tmp_path: Path) -> None:
    recorded = history(tmp_path, error_rate=0.2, zero_result_rate=0.5, p95_seconds=2.0,
                       min_events=5)  # fmt: skip
    for n in range(6):  # 6 answers, 3 failed: 50% > 20%
        recorded.append(operation("answer", 1.0, outcome="error" if n % 2 else "ok"))
    for n in range(5):  # 5 searches, 4 empty: 80% > 50%; p95 5 s > 2 s
        recorded.append(operation("search", 5.0 if n == 4 else 0.1, hits=0 if n else 3))
    for _ in range(4):  # too few deletes to judge, however slow
        recorded.append(operation("delete", 60.0))
    alerts = recorded.snapshot()["alerts"]
    named = {(a["alert"], a["operation"]): a for a in alerts}
    assert set(named) == {
        ("error_rate", "answer"),
        ("zero_result_rate", "search"),
        ("p95_latency", "search"),
    }
    errors = named[("error_rate", "answer")]
    assert (errors["window"], errors["count"], errors["value"]) == ("5m", 6, 0.5)
    assert errors["message"] == (
        "answer: 50% failed (> 20%) over the last 5m, based on 6 operations"
    )
    assert named[("p95_latency", "search")]["value"] == 5.0


def test_quiet_history_has_no_alerts_and_clear_forgets(tmp_path: Path) -> None:
    recorded = history(tmp_path)
    recorded.append(operation("answer", 1.0, outcome="error"))
    assert recorded.snapshot()["alerts"] == []  # one failure is not an outage
    assert recorded.clear() == 1
    assert recorded.events() == [] and history(tmp_path).events() == []


def test_rules_come_from_the_environment() -> None:
    env = {"CITEWISE_ALERT_ERROR_RATE": "0.05", "CITEWISE_ALERT_WINDOW": "1h",
           "CITEWISE_ALERT_MIN_EVENTS": "20"}  # fmt: skip
    rules = AlertRules.from_env(env)
    assert (rules.error_rate, rules.window, rules.min_events) == (0.05, "1h", 20)
    with pytest.raises(ConfigurationError, match="CITEWISE_ALERT_WINDOW"):
        AlertRules.from_env({"CITEWISE_ALERT_WINDOW": "2m"})
    with pytest.raises(ConfigurationError, match="CITEWISE_ALERT_P95_SECONDS"):
        AlertRules.from_env({"CITEWISE_ALERT_P95_SECONDS": "slow"})


def test_a_damaged_file_is_started_again(tmp_path: Path) -> None:
    (tmp_path / HISTORY_FILE).write_text("{not json")
    recorded = history(tmp_path)
    recorded.append(operation("search", 0.1, hits=1))
    assert len(recorded.events()) == 1


def test_one_history_per_home(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    assert DiagnosticsHistory.of(settings) is DiagnosticsHistory.of(Settings(home=tmp_path))
