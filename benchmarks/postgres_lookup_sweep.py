"""The keyword search of the PostgreSQL store against main's full scoring, at one LOOKUP.

Usage: flock /work/scratch/heavy.lock python benchmarks/postgres_lookup_sweep.py
    'URL?schema=bench_100000' LOOKUP [CORPUS]  (the corpus postgres_1m.py wrote; k = 20,
    100 queries; CORPUS: SciFact's corpus.jsonl, default ../shared/data beside the project)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from citewise.evaluation.synthetic import vocabulary
from citewise.store import open_store
from citewise.store import postgres_bm25 as bm25
from citewise.store.postgres import PostgresStore

sys.path.insert(0, str(Path(__file__).parent))
from postgres_1m import CORPUS, _full_scoring  # noqa: E402

store = open_store(sys.argv[1], home=Path("."))
assert isinstance(store, PostgresStore)
bm25.LOOKUP = float(sys.argv[2])  # type: ignore[assignment]
words, p = vocabulary(Path(sys.argv[3]) if len(sys.argv) > 3 else CORPUS)
rng = np.random.default_rng([0, 7])
texts = [" ".join(rng.choice(words, size=3, p=p)) for _ in range(100)]
kb = store.open("synthetic")
new, old = [], []
for text in texts:
    started = time.perf_counter()
    kb.keyword(text, 20)
    new.append(time.perf_counter() - started)
    started = time.perf_counter()
    _full_scoring(store, text, 20)
    old.append(time.perf_counter() - started)
a, b = sorted(new), sorted(old)
print(f"LOOKUP {bm25.LOOKUP}: p50 {1000 * a[50]:.0f} vs {1000 * b[50]:.0f} ms (ratio "
      f"{a[50] / b[50]:.2f}), p95 {1000 * a[95]:.0f} vs {1000 * b[95]:.0f} ms "
      f"(ratio {a[95] / b[95]:.2f})")  # fmt: skip
store.close()
