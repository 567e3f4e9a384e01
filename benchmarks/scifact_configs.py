"""SciFact nDCG@10 / Recall@100 / MRR@10 of hybrid search under several fusion settings, one index.

    CITEWISE_HOME=/work/cw-home python benchmarks/scifact_configs.py ../shared/data/scifact \
        --store /tmp/scifact-store --out scifact-configs.json [--reverse] [--configs main,fusion]

The corpus is indexed once into ``--store`` (kept, so a second run, or main's code on the
same index, reuses it) through ``KnowledgeBase.add_sections`` as ``bench beir`` does;
``--reverse`` indexes it back to front, so a run started beside another cold run of the
same corpus fills the shared embedding cache from the other end. Each config sets the
fusion constants of ``citewise.retrieval.hybrid`` (when that code has them) and searches
the 300 test queries with top_k=100, as ``bench beir`` does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from citewise.config import Settings
from citewise.evaluation.beir import load_beir
from citewise.evaluation.metrics import evaluate
from citewise.kb import KnowledgeBase, Library
from citewise.models import Section
from citewise.retrieval import hybrid

CONFIGS: dict[str, dict[str, object]] = {
    # This branch with every new stage off: the fusion of main.
    "main-equivalent": {
        "API_WEIGHT": 1.0,
        "NAME_WEIGHT": 0.0,
        "PROXIMITY_WEIGHT": 0.0,
        "collapse": False,
    },
    "collapse-only": {"API_WEIGHT": 1.0, "NAME_WEIGHT": 0.0, "PROXIMITY_WEIGHT": 0.0},
    "defaults": {},
    "proximity-0.5": {"PROXIMITY_WEIGHT": 0.5},
    "proximity-1": {"PROXIMITY_WEIGHT": 1.0},
    "code-as-is": {"collapse": None},
    
    
    
    "proximity-0.25": {"PROXIMITY_WEIGHT": 0.25},
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--store", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--reverse", action="store_true")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--index-only", action="store_true")
    parser.add_argument(
        "--first-docs", type=int, default=None,
        help="only the corpus's first N documents and the queries all of whose relevant "
        "documents are among them (a paired comparison of configs, not the published figure)",
    )  # fmt: skip
    args = parser.parse_args()
    corpus, queries, qrels = load_beir(args.dataset, "test")
    if args.first_docs is not None:
        corpus = dict(list(corpus.items())[: args.first_docs])
        queries = {q: t for q, t in queries.items() if q in qrels and set(qrels[q]) <= set(corpus)}
        qrels = {q: qrels[q] for q in queries}
        print(f"{len(corpus)} documents, {len(queries)} queries", flush=True)
    settings = Settings.from_env().with_overrides(store_url=f"sqlite:///{args.store}")
    library = Library(settings)
    embedder = library.embedder("minilm", cached=True)
    kb = KnowledgeBase("scifact", library=library, embedder=embedder)
    if not kb.exists:
        items = list(corpus.items())
        if args.reverse:
            items.reverse()
        documents = {
            doc_id: [
                Section(doc_id, title or doc_id, (title or doc_id,), 1, "", doc_id, doc_id, text)
            ]
            for doc_id, (title, text) in items
        }
        started = time.perf_counter()
        kb.add_sections(documents)
        print(f"indexed in {time.perf_counter() - started:.0f}s", flush=True)
    if args.index_only:
        return
    defaults = {
        name: getattr(hybrid, name)
        for name in ("API_WEIGHT", "NAME_WEIGHT", "PROXIMITY_WEIGHT")
        if hasattr(hybrid, name)
    }
    report = {}
    for name in args.configs.split(","):
        config = dict(CONFIGS[name])
        collapse = config.pop("collapse", True)
        for key, value in {**defaults, **config}.items():
            setattr(hybrid, key, value)
        extra = {} if collapse is None else {"collapse_sections": collapse}
        run, latencies = {}, []
        for query_id, text in queries.items():
            started = time.perf_counter()
            hits = kb.search(text, top_k=100, search_type="hybrid", **extra)
            latencies.append(time.perf_counter() - started)
            run[query_id] = list(dict.fromkeys(hit.chunk.doc_id for hit in hits))
        report[name] = {
            **evaluate(run, qrels),
            "p50_ms": round(1000 * statistics.median(latencies), 2),
        }
        print(name, report[name], flush=True)
    Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
