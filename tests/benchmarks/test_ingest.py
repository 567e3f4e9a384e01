"""``python -m benchmarks.ingest``: every variant indexes the same sample; ratios to the
baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.ingest import main

from ..conftest import SHARED_DATA

SCIFACT = SHARED_DATA / "scifact"


@pytest.mark.skipif(not SCIFACT.is_dir(), reason=f"{SCIFACT} is not here")
def test_bench_ingest_compares_window_settings_on_the_same_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    output = tmp_path / "ingest.json"
    code = main([str(SCIFACT), "--documents", "12", "--rounds", "1",
                 "--batch-sizes", "8", "--output", str(output)])  # fmt: skip
    assert code == 0
    report = json.loads(output.read_text())
    rows = report["variants"]
    assert list(rows) == ["chars700 batch16", "tokens254 batch8 threads auto"]
    assert rows["chars700 batch16"]["time_vs_baseline"] == 1.0
    # Token windows hold more text each: fewer of them for the same documents.
    assert (
        12 <= rows["tokens254 batch8 threads auto"]["windows"] < rows["chars700 batch16"]["windows"]
    )
    assert "| chars700 batch16 |" in output.with_suffix(".md").read_text()
    assert "time vs baseline" in capsys.readouterr().out
