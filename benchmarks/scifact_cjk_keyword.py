"""SciFact with 200 CJK documents: CJK, mixed, full-width, identifier and filtered keyword
queries through the SQLite store's bigram index, their hits and scores, and their latency.

Two trees compare in the same run (issue 35: the bigram index of only the chunks with CJK
must score as the index of every chunk did):

    PYTHONPATH=OTHER_TREE/src python benchmarks/scifact_cjk_keyword.py main.json
    python benchmarks/scifact_cjk_keyword.py this.json
    cmp main.json this.json

Every query's hits (chunk id, score) go to the path given; the line printed has the queries'
p50 and p95 over 30 rounds (the keyword matrix built first) and a digest of the hits. The data is
``$CITEWISE_TEST_DATA/scifact`` (else ``../shared/data/scifact`` beside the tree).
"""

import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from citewise.chunking import chunk_sections
from citewise.evaluation.beir import load_beir
from citewise.models import Document, SearchFilter, Section
from citewise.store import DocumentUpdate
from citewise.store.sqlite import SQLiteStore

V = np.full((1, 4), 0.5, dtype=np.float32)
DATA = Path(
    os.environ.get("CITEWISE_TEST_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)
WORDS = ["细胞", "检索", "癌症", "治疗", "向量", "文档", "免疫", "蛋白质", "基因", "表达"]
QUERIES = [
    "检索 treatment",
    "细胞 cancer cells",
    "Ｃａｎｃｅｒ therapy 治疗",
    "癌症治疗",
    "检索",
    "癌",
    "免疫 蛋白质 基因表达 T cell",
    "细胞 vector_weight receptor",
]

corpus = load_beir(DATA / "scifact", "test")[0]
cjk_docs = {}
for i in range(200):
    body = " ".join(
        WORDS[(i * 7 + j) % len(WORDS)] + ("" if j % 3 else WORDS[(i + j) % len(WORDS)])
        for j in range(i % 9 + 2)
    )
    english = " cancer cells therapy" if i % 2 else " T-cell receptor vector_weight"
    cjk_docs[f"cjk-{i}"] = body + english + (" Ｃａｎｃｅｒ" if i % 5 == 0 else "")
# The keyword matrix built in the caller by the first search, not in the background while the
# queries are timed: the steady state of a served knowledge base.
store = SQLiteStore(Path(tempfile.mkdtemp()), impacts_in_background=False)
kb = store.create("s")
updates = []
for doc_id, (title, text) in list(corpus.items()) + [(k, (k, v)) for k, v in cjk_docs.items()]:
    scope = "cjk" if doc_id.startswith("cjk") else "sci"
    section = Section(doc_id, title or doc_id, (title or doc_id,), 1, "", doc_id, doc_id, text,
                      scope=scope)  # fmt: skip
    chunks = chunk_sections([section], 2000)
    document = Document(doc_id, title or doc_id, doc_id, doc_id, "h", scope)
    updates.append(DocumentUpdate(document, chunks, {c.chunk_id: V for c in chunks}))
kb.apply(updates)
kb.keyword("cancer", 1)
hits = {q: [(c.chunk_id, s) for c, s in kb.keyword(q, 100)] for q in QUERIES}
hits |= {
    f"{q} |scope=sci": [(c.chunk_id, s) for c, s in kb.keyword(q, 100, SearchFilter("sci"))]
    for q in QUERIES
}
hits |= {f"{q} |k=5000": [(c.chunk_id, s) for c, s in kb.keyword(q, 5000)] for q in QUERIES[:3]}
times = []
for _round in range(30):
    for q in QUERIES:
        started = time.perf_counter()
        kb.keyword(q, 100)
        times.append(time.perf_counter() - started)
Path(sys.argv[1]).write_text(json.dumps(hits))
print(
    json.dumps(
        {
            "p50_ms": round(statistics.median(times) * 1000, 2),
            "p95_ms": round(float(np.percentile(times, 95)) * 1000, 2),
            "digest": hashlib.sha256(json.dumps(hits).encode()).hexdigest()[:16],
            "hits": sum(map(len, hits.values())),
        }
    )
)
store.close()
