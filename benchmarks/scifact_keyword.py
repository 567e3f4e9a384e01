"""SciFact keyword-only nDCG@10 without embeddings: the same sections and chunks as ``bench beir``.

Only the keyword figure; it runs in a minute, so two trees compare in the same run:

    PYTHONPATH=OTHER_TREE/src python benchmarks/scifact_keyword.py   # a baseline tree
    python benchmarks/scifact_keyword.py                              # this tree

With a path argument, every query's top 100 (chunk id, score) is also written there as JSON,
with six CJK, mixed and identifier queries (the bigram and identifier indexes), so two
trees' files compare scores bit for bit. The data is ``$CITEWISE_TEST_DATA/scifact`` (else
``../shared/data/scifact`` beside the tree).
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from citewise.chunking import chunk_sections
from citewise.evaluation.beir import load_beir
from citewise.evaluation.metrics import evaluate
from citewise.models import Document, Section
from citewise.store import DocumentUpdate
from citewise.store.sqlite import SQLiteStore

V = np.ones((1, 4), dtype=np.float32) / 2
DATA = Path(
    os.environ.get("CITEWISE_TEST_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)
corpus, queries, qrels = load_beir(DATA / "scifact", "test")
tmp = tempfile.mkdtemp()
store = SQLiteStore(Path(tmp))
kb = store.create("s")
ups = []
for doc_id, (title, text) in corpus.items():
    sec = Section(doc_id, title or doc_id, (title or doc_id,), 1, "", doc_id, doc_id, text)
    chunks = chunk_sections([sec], 2000)
    ups.append(
        DocumentUpdate(
            Document(doc_id, title or doc_id, doc_id, doc_id, "h", ""),
            chunks,
            {c.chunk_id: V for c in chunks},
        )
    )
kb.apply(ups)
if len(sys.argv) > 1:
    extra = [
        "检索 treatment",
        "细胞 cancer cells",
        "Ｃａｎｃｅｒ therapy",
        "T-cell vector_weight --flag",
        "癌 cancer",
        "细胞 vector_weight receptor",
    ]
    scores = {q: [(c.chunk_id, s) for c, s in kb.keyword(text, 100)] for q, text in queries.items()}
    scores |= {q: [(c.chunk_id, s) for c, s in kb.keyword(q, 100)] for q in extra}
    Path(sys.argv[1]).write_text(json.dumps(scores))
run = {}
t = time.perf_counter()
for qid, q in queries.items():
    hits = kb.keyword(q, 100)
    run[qid] = list(dict.fromkeys(c.doc_id for c, _ in hits))
print(
    json.dumps(
        {"keyword": evaluate(run, qrels), "ms": (time.perf_counter() - t) / len(queries) * 1000}
    )
)
