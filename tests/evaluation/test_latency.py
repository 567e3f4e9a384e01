"""`bench latency` and its synthetic knowledge bases, on a tiny BEIR-format dataset."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from citewise.cli import main
from citewise.embedding.query_lru import QUERY_EMBEDDINGS
from citewise.evaluation.synthetic import KB_NAME, build_synthetic, query_vectors
from citewise.evaluation.synthetic import vocabulary as synthetic_vocabulary
from citewise.store import SQLiteStore
from citewise.store.ann import ann_available
from tests.evaluation.test_beir import write_dataset

pytest.importorskip("bm25s")
pytestmark = pytest.mark.skipif(not ann_available(), reason="the ann extra (usearch)")


def test_a_synthetic_kb_is_built_once_and_queries_land_near_their_window(
    tmp_path: Path,
) -> None:
    corpus = write_dataset(tmp_path / "tiny") / "corpus.jsonl"
    built = build_synthetic(tmp_path / "synth", 120, corpus, seed=3)
    db = built.root / f"{KB_NAME}.sqlite"
    mtime = db.stat().st_mtime_ns
    assert build_synthetic(tmp_path / "synth", 120, corpus, seed=3) == built
    assert db.stat().st_mtime_ns == mtime  # reused, not rebuilt
    store = SQLiteStore(built.root, ann_threshold=0)
    try:
        kb = store.open(KB_NAME)
        assert len(kb.chunk_ids()) == 120 and len(kb.documents()) == 12
        vocabulary = {w for c in kb.get(sorted(kb.chunk_ids())) for w in c.text.split()}
        words, frequency = synthetic_vocabulary(corpus)
        assert vocabulary <= set(words) and list(frequency) == sorted(frequency, reverse=True)
        queries = query_vectors(built, 5)
        assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
        # Each query is a stored window moved a little: its best match is far above the rest.
        for q in queries:
            (_, first), (_, second) = kb.dense(q, 2)
            assert first > 0.9 > second
    finally:
        store.close()


def test_cli_reports_stages_floors_baselines_and_memory_per_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    dataset = write_dataset(tmp_path / "tiny")
    output = tmp_path / "latency.json"
    hits_before = QUERY_EMBEDDINGS.hits
    args = ["bench", "latency", str(dataset), "--sizes", "200", "--queries", "2"]
    assert main([*args, "--synthetic-dir", str(tmp_path / "synth"), "--output", str(output)]) == 0
    report = json.loads(output.read_text())
    # Every timed hybrid search embedded its query: the query LRU answered none of them.
    assert QUERY_EMBEDDINGS.hits == hits_before
    assert [s["name"] for s in report["sizes"]] == ["scifact", "synthetic-200"]
    for size in report["sizes"]:
        assert {"embed_query", "dense", "keyword", "fuse", "search"} <= set(size["stages"])
        assert size["dense_ann"]["recall@10"] == 1.0  # a tiny index is searched whole
        for part in ("dense_exact", "keyword", "floor_fts5"):
            assert size[part]["p50_ms"] > 0, part
        assert size["baselines"]["bm25s"]["p50_ms"] > 0
        assert size["baselines"]["rank_bm25"]["p50_ms"] > 0
        assert size["memory"]["exact"]["rss_after_mb"] > 0
    assert report["sizes"][1]["dense_exact"]["windows"] == 200
    assert report["sizes"][1]["dense_exact"]["floor_matrix_product_1_thread"]["p50_ms"] > 0
    assert report["keyword_bound"]["or_query"]["ndcg@10"] > 0
    assert "| dense |" in output.with_suffix(".md").read_text()
