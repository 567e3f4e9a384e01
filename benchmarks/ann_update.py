"""The ANN index after an ingest: the first search's update time, then recall against exact.

Usage: python benchmarks/ann_update.py COPY-OF-{home}/bench/synthetic/synthetic-100000 out.json
(it writes to the knowledge base: give it a copy).
"""
import json, sys, time
from dataclasses import replace
from pathlib import Path

import numpy as np

from citewise.evaluation.synthetic import SyntheticKB, query_vectors, _batches, vocabulary
from citewise.store import DocumentUpdate, SQLiteStore

root = Path(sys.argv[1])
kb_ = SyntheticKB(root, 100_000, 0)
queries = query_vectors(kb_, 50)
ann = SQLiteStore(root, ann_threshold=1)
kb = ann.open("synthetic")
started = time.perf_counter(); kb.dense(queries[0], 10); out = {"open_s": round(time.perf_counter() - started, 2)}
# 5,000 new windows (a different seed's batch, new ids) and 500 documents (5,000 windows) removed.
words, p = vocabulary(Path("../shared/data/scifact/corpus.jsonl"))
new = [
    DocumentUpdate(
        replace(u.document, doc_id="n" + u.document.doc_id),
        [replace(c, chunk_id="n" + c.chunk_id, doc_id="n" + c.doc_id) for c in u.chunks],
        {"n" + k: v for k, v in u.vectors.items()},
    )
    for u in next(_batches(5000, words, p, seed=7))
]
started = time.perf_counter()
kb.apply(new, removed_doc_ids=[f"d{i}" for i in range(0, 10_000, 20)])
out["ingest_s"] = round(time.perf_counter() - started, 2)
started = time.perf_counter(); kb.dense(queries[0], 10); out["first_search_after_ingest_s"] = round(time.perf_counter() - started, 2)
exact = SQLiteStore(root, ann_threshold=0).open("synthetic")
hits = sum(len({c.chunk_id for c, _ in kb.dense(q, 10)} & {c.chunk_id for c, _ in exact.dense(q, 10)}) for q in queries)
out["recall@10_after"] = hits / (10 * len(queries))
out["windows_after"] = len(kb.chunk_ids())
print(json.dumps(out)); json.dump(out, open(sys.argv[2], "w"), indent=2)
