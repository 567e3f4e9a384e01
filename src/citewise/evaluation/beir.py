"""`citewise bench beir`: retrieval quality and speed on a BEIR dataset, beside rank_bm25."""

from __future__ import annotations

import hashlib
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from citewise.config import Settings
from citewise.errors import SourceError
from citewise.evaluation.baselines import (
    langchain_ensemble_baseline,
    rank_bm25_baseline,
    require_baselines,
)
from citewise.evaluation.metrics import Qrels, Run, evaluate
from citewise.kb import KnowledgeBase, Library, Progress
from citewise.models import Section

# The report's row names (kept from earlier reports) and the search type each measures.
MODES = {"vector": "vector", "keyword": "full_text", "hybrid": "hybrid"}
BENCH_KB = "beir"


def load_beir(folder: Path, split: str) -> tuple[dict[str, tuple[str, str]], dict[str, str], Qrels]:
    """(corpus id → (title, text), query id → text, qrels) of a BEIR-format folder."""
    try:
        corpus = {}
        for line in (folder / "corpus.jsonl").read_text().splitlines():
            record = json.loads(line)
            corpus[str(record["_id"])] = (record.get("title", ""), record["text"])
        queries = {
            str(r["_id"]): r["text"]
            for r in map(json.loads, (folder / "queries.jsonl").read_text().splitlines())
        }
        qrels: dict[str, dict[str, int]] = {}
        for line in (folder / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]:
            query_id, doc_id, score = line.split("\t")[:3]
            qrels.setdefault(query_id, {})[doc_id] = int(score)
    except FileNotFoundError as error:
        raise SourceError(f"{folder}: not a BEIR dataset ({error.filename} missing)") from None
    return corpus, {q: queries[q] for q in qrels if q in queries}, qrels


def subsample_corpus(
    corpus: dict[str, tuple[str, str]], qrels: Qrels, max_docs: int
) -> dict[str, tuple[str, str]]:
    """Every judged document plus a fixed pseudo-random sample of the rest, ``max_docs`` in all.

    For comparing slow embedders on the same smaller corpus: the sample is chosen by a hash
    of the document id, so every run and every embedder gets the same documents.
    """
    judged = {doc for judgements in qrels.values() for doc in judgements if doc in corpus}
    others = sorted(
        (doc for doc in corpus if doc not in judged),
        key=lambda doc: hashlib.sha256(doc.encode()).hexdigest(),
    )
    keep = judged | set(others[: max(0, max_docs - len(judged))])
    return {doc: corpus[doc] for doc in corpus if doc in keep}


def _percentiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": _milliseconds(statistics.median(ordered)),
        "p95_ms": _milliseconds(ordered[int(0.95 * (len(ordered) - 1))]),
    }


def _milliseconds(seconds: float) -> float:
    """Two decimals, or three significant digits under 1 ms: a few microseconds (a matrix
    product over a tiny index) is a figure, not 0.0."""
    ms = 1000 * seconds
    return round(ms, 2) if ms >= 1 else float(f"{ms:.3g}")


def _timed_run(
    queries: dict[str, str], ranker: Callable[[str], list[str]]
) -> tuple[Run, list[float]]:
    run: dict[str, list[str]] = {}
    latencies = []
    for query_id, text in queries.items():
        started = time.perf_counter()
        run[query_id] = ranker(text)
        latencies.append(time.perf_counter() - started)
    return run, latencies


def _dedupe(doc_ids: list[str]) -> list[str]:
    return list(dict.fromkeys(doc_ids))


def _index(
    kb: KnowledgeBase, corpus: dict[str, tuple[str, str]], progress: Progress | None
) -> dict[str, float]:
    """Ingest the corpus through the service layer's one pipeline (as parsed sections)."""
    documents = {
        doc_id: [Section(doc_id, title or doc_id, (title or doc_id,), 1, "", doc_id, doc_id, text)]
        for doc_id, (title, text) in corpus.items()
    }
    report = kb.add_sections(documents, progress=progress)
    return {
        "chunks": report.chunks,
        "windows": report.windows_embedded,
        "index_seconds": round(report.seconds, 2),
    }


def run_beir_benchmark(
    folder: Path,
    *,
    settings: Settings,
    embedder_name: str,
    split: str = "test",
    max_queries: int | None = None,
    baselines: bool = True,
    use_cache: bool = True,
    progress: Progress | None = None,
    max_docs: int | None = None,
) -> dict[str, Any]:
    """Index a BEIR dataset in a temporary store and measure every search mode.

    Returns a JSON-ready report: per mode nDCG@10, Recall@100, MRR@10 and query latency; index
    timings; and the rank_bm25 baseline measured in the same process.
    """
    if baselines:
        require_baselines()
    corpus, queries, qrels = load_beir(folder, split)
    if max_queries is not None:
        queries = dict(list(queries.items())[:max_queries])
        qrels = {q: qrels[q] for q in queries}
    if max_docs is not None:
        corpus = subsample_corpus(corpus, qrels, max_docs)
    report: dict[str, Any] = {
        "dataset": folder.name,
        "split": split,
        "documents": len(corpus),
        "subsampled": max_docs is not None,
        "queries": len(queries),
        "embedder": embedder_name,
        "embedding_cache": use_cache,
        "modes": {},
    }
    with tempfile.TemporaryDirectory(prefix="citewise-bench-") as tmp:
        # A store of its own, beside the user's embedding cache (a rerun embeds nothing).
        library = Library(settings.with_overrides(store_url=f"sqlite:///{tmp}"))
        try:
            embedder = library.embedder(embedder_name, cached=use_cache)
            kb = KnowledgeBase(BENCH_KB, library=library, embedder=embedder)
            report["embedder"] = embedder.model_id
            report["index"] = _index(kb, corpus, progress)
            for mode, search_type in MODES.items():

                def rank(text: str, search_type: str = search_type) -> list[str]:
                    hits = kb.search(text, top_k=100, search_type=search_type)
                    return _dedupe([hit.chunk.doc_id for hit in hits])

                run, latencies = _timed_run(queries, rank)
                report["modes"][mode] = {**evaluate(run, qrels), **_percentiles(latencies)}
        finally:
            # Before the folder goes: a background build (the keyword matrix) must not
            # write into it while it is being removed.
            library.close()
    if baselines:
        report["baselines"] = {}
        for baseline in (
            rank_bm25_baseline(corpus),
            langchain_ensemble_baseline(corpus, embedder),
        ):
            run, latencies = _timed_run(queries, baseline.rank)
            report["baselines"][baseline.name] = {
                **evaluate(run, qrels),
                **_percentiles(latencies),
                "index_seconds": baseline.index_seconds,
            }
        report["ratios"] = _ratios(report)
    return report


def _ratios(report: dict[str, Any]) -> dict[str, float]:
    """Same-run ratios, the headline figures: ours over the baseline of the same kind."""
    modes, base = report["modes"], report["baselines"]

    def ratio(a: float, b: float) -> float:
        return round(a / b, 3) if b else 0.0

    return {
        "keyword_ndcg_vs_rank_bm25": ratio(
            modes["keyword"]["ndcg@10"], base["rank_bm25"]["ndcg@10"]
        ),
        "keyword_p50_vs_rank_bm25": ratio(modes["keyword"]["p50_ms"], base["rank_bm25"]["p50_ms"]),
        "hybrid_ndcg_vs_langchain": ratio(
            modes["hybrid"]["ndcg@10"], base["langchain_ensemble"]["ndcg@10"]
        ),
        "hybrid_p50_vs_langchain": ratio(
            modes["hybrid"]["p50_ms"], base["langchain_ensemble"]["p50_ms"]
        ),
    }


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"{report['dataset']} ({report['split']}): {report['documents']} documents, "
        f"{report['queries']} queries, embedder {report['embedder']}",
        f"{'system':<20} {'nDCG@10':>8} {'R@100':>8} {'MRR@10':>8} {'p50 ms':>8} {'p95 ms':>8}",
    ]
    rows = [(f"citewise {mode}", figures) for mode, figures in report["modes"].items()]
    rows += [(name, figures) for name, figures in report.get("baselines", {}).items()]
    for name, f in rows:
        lines.append(
            f"{name:<20} {f['ndcg@10']:>8.4f} {f['recall@100']:>8.4f} {f['mrr@10']:>8.4f} "
            f"{f['p50_ms']:>8.2f} {f['p95_ms']:>8.2f}"
        )
    index = report["index"]
    lines.append(
        f"index: {index['chunks']} chunks, {index['windows']} windows, "
        f"indexed in {index['index_seconds']}s"
    )
    return "\n".join(lines)
