"""``python -m benchmarks.serve`` on a small load: the report's shape and an error-free run."""

from __future__ import annotations

from pathlib import Path

from benchmarks.serve import format_report, run_serve_benchmark
from citewise.config import Settings


def test_bench_serve_reports_overhead_against_the_echo(lgos_home: Path) -> None:
    report = run_serve_benchmark(Settings(home=lgos_home), kb="lgos", concurrency=3, rounds=1)
    assert report["requests"] == 3 and report["errors"] == 0 and report["echo_errors"] == 0
    assert report["events_per_stream"] > 20  # statuses, answer deltas, annotation, done
    for server in ("citewise", "echo"):
        assert 0 < report[server]["p50_ms"] <= report[server]["p99_ms"]
    assert report["overhead"]["p50_ms"] == round(
        report["citewise"]["p50_ms"] - report["echo"]["p50_ms"], 2
    )
    # Search and model time are told apart from what the server adds.
    assert report["search_and_model_p50_ms"] > 0
    assert report["server_added_p50_ms"] < report["one_at_a_time_overhead_p50_ms"]
    assert report["cpu_ms_per_request"] > 0 and report["burst_p99_vs_cpu_floor"] > 0
    text = format_report(report)
    assert (
        "Server overhead per request" in text and "the server adds" in text and "| echo |" in text
    )
