"""`bench embed` measures every embedder on the same passages and reports ratios."""

from __future__ import annotations

import json
from pathlib import Path

from citewise.evaluation.embed_bench import measure_embedders, sample_passages


def test_sample_and_measure(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    records = [{"_id": str(i), "title": f"T{i}", "text": "word " * (50 + i)} for i in range(5)]
    records.append({"_id": "short", "title": "", "text": "too short"})
    corpus.write_text("\n".join(json.dumps(r) for r in records))
    passages = sample_passages(corpus, 3, chars=200)
    assert len(passages) == 3 and all(len(p) == 200 for p in passages)
    report = measure_embedders(["minilm"], passages, ["a query"])
    assert report["embedders"]["minilm"]["passages_per_s"] > 0
    assert report["throughput_ratio_vs_first"] == {"minilm": 1.0}
