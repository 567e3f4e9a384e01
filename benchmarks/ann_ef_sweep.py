"""ANN recall/latency on a built synthetic KB against exact, by HNSW search list (ef).

Usage: python benchmarks/ann_ef_sweep.py {home}/bench/synthetic/synthetic-1000000 out.json
"""
import json, sys, time, numpy as np
from pathlib import Path
from citewise.store import SQLiteStore
from citewise.evaluation.synthetic import SyntheticKB, query_vectors
kb_ = SyntheticKB(Path(sys.argv[1]), int(Path(sys.argv[1]).name.split('-')[1]), 0)
Q = query_vectors(kb_, 50)
ann = SQLiteStore(kb_.root, ann_threshold=1); a = ann.open('synthetic'); a.dense(Q[0], 10)
ix = ann._dense['synthetic']
out = {}
ex = SQLiteStore(kb_.root, ann_threshold=0); e = ex.open('synthetic')
t = time.perf_counter(); e.dense(Q[0], 10); out['exact_load_s'] = round(time.perf_counter() - t, 1)
lat = []; truth = []
for q in Q:
    t = time.perf_counter(); truth.append([c.chunk_id for c, _ in e.dense(q, 10)]); lat.append(time.perf_counter() - t)
out['exact_p50_ms'] = round(1000 * float(np.median(lat)), 2)
m = ex._dense['synthetic'].matrix
lat = []
for q in Q:
    t = time.perf_counter(); m @ q; lat.append(time.perf_counter() - t)
out['matmul_p50_ms'] = round(1000 * float(np.median(lat)), 2)
ex.close()
for ef in (64, 128, 256, 512):
    ix.index.expansion_search = ef
    lat = []; hits = 0
    for q, tr in zip(Q, truth):
        t = time.perf_counter(); got = [c.chunk_id for c, _ in a.dense(q, 10)]; lat.append(time.perf_counter() - t)
        hits += len(set(got) & set(tr))
    out[f'ef={ef}'] = {'p50_ms': round(1000 * float(np.median(lat)), 2), 'p95_ms': round(1000 * float(np.percentile(lat, 95)), 2), 'recall@10': hits / (10 * len(Q))}
    print(ef, out[f'ef={ef}'], flush=True)
print(json.dumps(out))
json.dump(out, open(sys.argv[2], 'w'), indent=2)
