"""HNSW recall on flat vs hierarchical clusters (200k vectors): is the 1M recall the data's?

Usage: python benchmarks/hnsw_structure.py out.json
"""
import json, sys, time, numpy as np
from usearch.index import Index
def unit(v): return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
n, d = 200_000, 384
rng = np.random.default_rng(0)
out = {}
for name in ("flat", "hierarchical"):
    if name == "flat":
        centers = unit(rng.standard_normal((n // 20, d)))
    else:  # 500 topics, clusters around them: related passages share a direction, as embeddings do
        topics = unit(rng.standard_normal((500, d)))
        centers = unit(topics[rng.integers(0, 500, n // 20)] + 0.8 * rng.standard_normal((n // 20, d)) / np.sqrt(d))
    X = unit(centers[rng.integers(0, len(centers), n)] + rng.standard_normal((n, d)) / np.sqrt(d))
    picks = rng.choice(n, 50, replace=False)
    Q = unit(X[picks] + rng.standard_normal((50, d)) / (3 * np.sqrt(d)))
    truth = np.argsort(-(Q @ X.T), axis=1)[:, :10]
    ix = Index(ndim=d, metric="ip", dtype="i8", connectivity=16, expansion_add=64, expansion_search=128)
    t = time.time(); ix.add(np.arange(n, dtype=np.uint64), X, threads=0); build = time.time() - t
    res = {"build_per_s": round(n / build)}
    for ef in (128, 512):
        ix.expansion_search = ef
        rec = [len(set(np.asarray(ix.search(q, 100, threads=1).keys).tolist()) & set(tr.tolist())) / 10 for q, tr in zip(Q, truth)]
        res[f"ef={ef}"] = float(np.mean(rec))
    out[name] = res
    print(name, res, flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=2)
