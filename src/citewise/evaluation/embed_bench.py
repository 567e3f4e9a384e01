"""`citewise bench embed`: embedder throughput on the same passages, in the same run."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citewise.embedding import get_embedder


def sample_passages(corpus: Path, count: int, chars: int = 1000) -> list[str]:
    """``count`` passages of about ``chars`` characters from a BEIR ``corpus.jsonl``."""
    passages = []
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            text = f"{record.get('title', '')}\n\n{record['text']}"
            if len(text) >= chars:
                passages.append(text[:chars])
            if len(passages) == count:
                break
    return passages


def measure_embedders(
    names: Sequence[str], passages: Sequence[str], queries: Sequence[str]
) -> dict[str, Any]:
    """Load time, passages/s and median query latency per embedder; ratios to the first."""
    results: dict[str, dict[str, float]] = {}
    for name in names:
        started = time.perf_counter()
        embedder = get_embedder(name)
        embedder.embed_query("warm up")  # loads the model lazily
        load = time.perf_counter() - started
        started = time.perf_counter()
        embedder.embed_documents(list(passages))
        seconds = time.perf_counter() - started
        latencies = []
        for query in queries:
            started = time.perf_counter()
            embedder.embed_query(query)
            latencies.append(time.perf_counter() - started)
        results[name] = {
            "load_s": round(load, 2),
            "passages_per_s": round(len(passages) / seconds, 2),
            "query_p50_ms": round(1000 * statistics.median(latencies), 1),
        }
    first = results[names[0]]
    return {
        "passages": len(passages),
        "passage_chars": max(map(len, passages)) if passages else 0,
        "embedders": results,
        "throughput_ratio_vs_first": {
            name: round(r["passages_per_s"] / first["passages_per_s"], 3)
            for name, r in results.items()
        },
    }
