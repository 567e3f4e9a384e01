"""First search after a 100k-window ingest: the ingest (one rebuild, as `citewise index` writes a
new knowledge base) then a fresh process's first dense search, for the code on PYTHONPATH.

Usage: PYTHONPATH=SRC python benchmarks/first_answer.py SCRATCH-FOLDER LABEL [WINDOWS]
Prints one JSON line; run it once with main's src and once with the branch's, in the same run.
"""
import json, shutil, subprocess, sys, time
from pathlib import Path

from citewise.evaluation.synthetic import KB_NAME, SyntheticKB, _batches, query_vectors, vocabulary
from citewise.store import SQLiteStore

folder, label = Path(sys.argv[1]), sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
root = folder / label
if len(sys.argv) > 4:  # the child: one fresh process's first search
    queries = query_vectors(SyntheticKB(root, n, 0), 5)
    started = time.perf_counter()
    store = SQLiteStore(root)  # the default ANN threshold (100,000 windows)
    store.open(KB_NAME).dense(queries[0], 10)
    first = time.perf_counter() - started
    started = time.perf_counter()
    for q in queries[1:]:
        store.open(KB_NAME).dense(q, 10)
    print(json.dumps({"first_s": first, "next_s": (time.perf_counter() - started) / 4}))
    sys.exit()
shutil.rmtree(root, ignore_errors=True)
words, p = vocabulary(Path("/work/shared/data/scifact/corpus.jsonl"))
updates = [u for batch in _batches(n, words, p, seed=0) for u in batch]
store = SQLiteStore(root)
started = time.perf_counter()
with store.write_lock(KB_NAME), store.rebuild(KB_NAME, {"embedder": "minilm"}) as target:
    target.apply(updates)
ingest = time.perf_counter() - started
store.close()
child = subprocess.run([sys.executable, sys.argv[0], str(folder), label, str(n), "search"], capture_output=True, text=True, check=True)
out = {"label": label, "windows": n, "ingest_s": round(ingest, 2), **{k: round(v, 3) for k, v in json.loads(child.stdout).items()}}
print(json.dumps(out))
shutil.rmtree(root, ignore_errors=True)
