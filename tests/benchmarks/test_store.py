"""`python -m benchmarks.store`'s scale run on a small synthetic knowledge base (both stores)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.store import format_report, run_store_benchmark
from citewise.config import Settings
from tests import pg


def test_the_scale_run_measures_both_stores_and_hnsw(tmp_path: Path) -> None:
    url = pg.fresh_url()
    try:
        report = run_store_benchmark(
            settings=Settings(home=tmp_path), pg_url=url, scifact=None, sizes=[300]
        )
    finally:
        pg.drop_schema(url)
    [run] = report["scale"]
    assert run["chunks"] == 300
    assert run["postgresql"]["exact_recall@10"] == 1.0  # exact search agrees with SQLite's
    assert set(run["postgresql"]["hnsw"]) == {"ef_search=40", "ef_search=100", "ef_search=200"}
    assert all(f["recall@10"] > 0.9 for f in run["postgresql"]["hnsw"].values())
    assert "300 chunks" in format_report(report)
