"""Chunk overlap on BEIR SciFact: the same corpus indexed with and without overlap.

SciFact's documents are single abstracts, most shorter than a chunk (2,000 characters), so
overlap only changes the ~14% that are split. Each setting gets a knowledge base of its own
(created with that overlap) in a temporary store, sharing one embedding cache; every search
mode is measured with the metrics of ``citewise bench beir``. The dev-case figures (the other
half of the measurement) come from ``citewise eval --retrieval-only``; see chunk-overlap.md.

    .venv/bin/python benchmarks/chunk_overlap.py [--home DIR] [--overlaps 0 200]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from citewise.config import Settings
from citewise.evaluation.beir import MODES, load_beir, subsample_corpus
from citewise.evaluation.metrics import evaluate
from citewise.kb import IndexStrategy, KBConfig, Library
from citewise.models import Section

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "data" / "scifact"


def measure(settings: Settings, overlap: int, max_docs: int | None) -> dict[str, object]:
    corpus, queries, qrels = load_beir(SCIFACT, "test")
    if max_docs is not None:
        corpus = subsample_corpus(corpus, qrels, max_docs)
    documents = {
        doc_id: [Section(doc_id, title or doc_id, (title or doc_id,), 1, "", doc_id, doc_id, text)]
        for doc_id, (title, text) in corpus.items()
    }
    with tempfile.TemporaryDirectory(prefix="citewise-overlap-") as tmp:
        library = Library(settings.with_overrides(store_url=f"sqlite:///{tmp}"))
        config = KBConfig(strategy=IndexStrategy(overlap=overlap), embedder=settings.embedder)
        kb = library.create("scifact", config)
        report = kb.add_sections(documents)
        result: dict[str, object] = {
            "overlap": overlap, "documents": len(corpus), "chunks": report.chunks,
            "split_documents": sum(1 for title, text in corpus.values()
                                   if len(f"{title}\n\n{text}") > 2000),
        }  # fmt: skip
        for mode, search_type in MODES.items():
            run = {}
            for query_id, text in queries.items():
                hits = kb.search(text, top_k=100, search_type=search_type)
                run[query_id] = list(dict.fromkeys(hit.chunk.doc_id for hit in hits))
            result[mode] = evaluate(run, qrels)
        library.close()
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, default=None, help="CITEWISE_HOME (the cache)")
    parser.add_argument("--overlaps", type=int, nargs="+", default=[0, 200])
    parser.add_argument(
        "--max-docs", type=int, default=None, help="judged documents plus a fixed sample"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "chunk-overlap.json")
    args = parser.parse_args()
    settings = Settings.from_env()
    if args.home is not None:
        settings = settings.with_overrides(home=args.home)
    results = [measure(settings, overlap, args.max_docs) for overlap in args.overlaps]
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
