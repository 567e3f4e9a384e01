"""usearch alone at 1M synthetic windows: build time, latency and recall@10 of the rescored top 10.

Usage: python benchmarks/hnsw_1m.py CONNECTIVITY EXPANSION_ADD [out.json] (vectors regenerated
from the synthetic KB's seed under /tmp/bench/home/bench/synthetic/synthetic-1000000).
"""
import json, sys, time
import onnxruntime  # noqa: F401  (before usearch: the other order segfaults)
import numpy as np
from pathlib import Path
from usearch.index import Index
from citewise.evaluation.synthetic import SyntheticKB, query_vectors, _centers, _vectors, BATCH
N = 1_000_000
kb = SyntheticKB(Path('/tmp/bench/home/bench/synthetic/synthetic-1000000'), N, 0)
centers = _centers(N, kb.seed)
t = time.perf_counter()
X = np.empty((N, 384), dtype=np.float32)
for s in range(0, N, BATCH):
    n = min(BATCH, N - s); X[s:s+n] = _vectors(s, n, centers, kb.seed)
print('vectors', round(time.perf_counter() - t, 1), flush=True)
Q = query_vectors(kb, 50)
truth = [set(np.argpartition(-(X @ q), 10)[:10].tolist()) for q in Q]
M, EFC = int(sys.argv[1]), int(sys.argv[2])
idx = Index(ndim=384, metric='ip', dtype='i8', connectivity=M, expansion_add=EFC, expansion_search=128)
t = time.perf_counter()
idx.add(np.arange(N, dtype=np.uint64), X, threads=2)
build = time.perf_counter() - t
print('build', round(build, 1), flush=True)
out = {'M': M, 'ef_construction': EFC, 'build_s': round(build, 1)}
for ef in (128, 256, 512, 1024):
    idx.expansion_search = ef
    lat = []; hits = 0
    for q, tr in zip(Q, truth):
        t = time.perf_counter(); m = idx.search(q, 100); lat.append(time.perf_counter() - t)
        cand = m.keys.astype(np.int64)
        exact = cand[np.argsort(-(X[cand] @ q))[:10]]  # exact rescoring of 100 candidates
        hits += len(set(exact.tolist()) & tr)
    out[f'ef={ef}'] = {'p50_ms': round(1000 * float(np.median(lat)), 2), 'recall@10': hits / 500}
    print(ef, out[f'ef={ef}'], flush=True)
json.dump(out, open(sys.argv[3] if len(sys.argv) > 3 else 'benchmarks/hnsw-1m.json', 'w'), indent=2)
