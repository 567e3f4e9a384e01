"""Cold ingest of a SciFact subset (no embedding cache), for the code on PYTHONPATH: the index
seconds and windows of `citewise bench beir --max-docs N` without the query modes' cost.

Usage: PYTHONPATH=SRC python benchmarks/ingest_subset.py /work/shared/data/scifact HOME [N]
Prints one JSON line; run it with main's src and the branch's in the same run, same N.
"""
import json
import resource
import sys
import tempfile
from pathlib import Path

from citewise.config import Settings
from citewise.evaluation.beir import BENCH_KB, _index, load_beir, subsample_corpus
from citewise.kb import KnowledgeBase, Library

folder, home = Path(sys.argv[1]), Path(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
corpus, _, qrels = load_beir(folder, "test")
corpus = subsample_corpus(corpus, qrels, n)
with tempfile.TemporaryDirectory(prefix="citewise-ingest-") as tmp:
    settings = Settings(home=home).with_overrides(store_url=f"sqlite:///{tmp}")
    library = Library(settings)
    embedder = library.embedder("minilm", cached=False)
    kb = KnowledgeBase(BENCH_KB, library=library, embedder=embedder)
    found = _index(kb, corpus, None)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(json.dumps({"documents": len(corpus), **found, "peak_rss_mb": peak_mb}))
