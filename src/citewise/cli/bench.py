"""`citewise bench beir | embed | langrag | latency | serve | store`: retrieval, embedder,
latency, server and store benchmarks."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from citewise.cli.common import DEFAULT_KB, Subcommands
from citewise.config import Settings

__all__ = ["add_bench_commands"]

# Each benchmark imports its harness when run: they pull in optional extras (rank_bm25,
# LangChain retrievers, an HTTP server) that no other command needs.


def cmd_bench_beir(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.beir import format_report, run_beir_benchmark

    def log(done: int, total: int, what: str) -> None:
        print(f"embedded {done}/{total} windows", file=sys.stderr, flush=True)

    report = run_beir_benchmark(
        Path(args.dataset),
        settings=settings,
        embedder_name=args.embedder or settings.embedder,
        split=args.split,
        max_queries=args.max_queries,
        max_docs=args.max_docs,
        baselines=not args.no_baselines,
        progress=log,
    )
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def cmd_bench_embed(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.embed_bench import measure_embedders, sample_passages

    dataset = Path(args.dataset)
    passages = sample_passages(dataset / "corpus.jsonl", args.passages)
    queries = [
        json.loads(line)["text"]
        for line in (dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines()[:20]
    ]
    report = measure_embedders(args.embedders.split(","), passages, queries)
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


def cmd_bench_langrag(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.langrag import format_report, run_langrag_benchmark

    report = run_langrag_benchmark(
        [Path(d) for d in args.datasets],
        settings=settings,
        embedders=args.embedder or ["minilm", "e5"],
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else format_report(report))
    return 0


def cmd_bench_latency(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.latency import format_report, run_latency_benchmark

    def save(report: dict[str, Any]) -> None:
        if args.output:
            output = Path(args.output)
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(json.dumps(report, indent=2) + "\n")
            output.with_suffix(".md").write_text(format_report(report))

    report = run_latency_benchmark(
        Path(args.dataset),
        settings=settings,
        sizes=[int(n) for n in args.sizes.split(",") if n],
        synthetic_folder=Path(args.synthetic_dir or settings.home / "bench" / "synthetic"),
        queries=args.queries,
        embedder_name=args.embedder or settings.embedder,
        progress=lambda done, total, what: print(f"{done}/{total} {what}", file=sys.stderr),
        partial=save,
    )
    save(report)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def cmd_bench_serve(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.server.bench import format_report, run_serve_benchmark

    report = run_serve_benchmark(
        settings, kb=args.kb, concurrency=args.concurrency, rounds=args.rounds
    )
    if args.output:
        output = Path(args.output)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report, indent=2) + "\n")
        output.with_suffix(".md").write_text(format_report(report))
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def cmd_bench_store(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.store_bench import format_report, run_store_benchmark

    report = run_store_benchmark(
        settings=settings,
        pg_url=args.postgres,
        scifact=None if args.skip_scifact else Path(args.dataset),
        sizes=[int(n) for n in args.sizes.split(",") if n],
        ef_search=args.ef_search,
        progress=lambda done, total, what: print(f"{done}/{total} {what}", file=sys.stderr),
    )
    if args.output:
        output = Path(args.output)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def add_bench_commands(commands: Subcommands) -> None:
    """``citewise bench beir|embed|langrag|latency|serve|store``."""
    bench = commands.add_parser("bench", help="retrieval benchmarks")
    kinds = bench.add_subparsers(dest="bench", required=True)

    beir = kinds.add_parser("beir", help="nDCG@10 / Recall@100 on a BEIR dataset")
    beir.add_argument("dataset", help="folder with corpus.jsonl, queries.jsonl, qrels/")
    beir.add_argument("--split", default="test")
    beir.add_argument("--embedder", default=None)
    beir.add_argument("--max-queries", type=int, default=None)
    beir.add_argument(
        "--max-docs", type=int, default=None, help="judged docs plus a fixed sample, N in all"
    )
    beir.add_argument("--no-baselines", action="store_true", help="skip rank_bm25")
    beir.add_argument("--output", help="also write the JSON report here")
    beir.add_argument("--json", action="store_true")
    beir.set_defaults(run=cmd_bench_beir)

    embed = kinds.add_parser("embed", help="embedder throughput on the same passages")
    embed.add_argument("dataset", help="BEIR folder (corpus.jsonl, queries.jsonl)")
    embed.add_argument("--embedders", default="minilm,e5")
    embed.add_argument("--passages", type=int, default=64)
    embed.add_argument("--output", help="also write the JSON report here")
    embed.set_defaults(run=cmd_bench_embed)

    langrag = kinds.add_parser(
        "langrag", help="hit/all-relevant/precision/recall/MRR/nDCG@1,3,5 on LangRAG sets"
    )
    langrag.add_argument("datasets", nargs="+", help="langrag-benchmarks/datasets/<set>.json")
    langrag.add_argument(
        "--embedder", action="append", default=[], help="repeatable (default: minilm and e5)"
    )
    langrag.add_argument("--output", help="also write the JSON report here")
    langrag.add_argument("--json", action="store_true")
    langrag.set_defaults(run=cmd_bench_langrag)

    latency = kinds.add_parser(
        "latency", help="per-stage query latency beside its floors, SciFact and synthetic sizes"
    )
    latency.add_argument("dataset", help="the SciFact BEIR folder (also the synthetic vocabulary)")
    latency.add_argument("--sizes", default="100000,1000000", help="synthetic window counts")
    latency.add_argument("--queries", type=int, default=100, help="queries per measurement")
    latency.add_argument("--embedder", default=None)
    latency.add_argument(
        "--synthetic-dir",
        help="where built synthetic KBs are kept (default {home}/bench/synthetic)",
    )
    latency.add_argument("--output", help="write the JSON report here (and a .md beside it)")
    latency.add_argument("--json", action="store_true")
    latency.set_defaults(run=cmd_bench_latency)

    serve = kinds.add_parser(
        "serve", help="server overhead under concurrent streams (scripted model)"
    )
    serve.add_argument("--kb", default=DEFAULT_KB, help="knowledge base to answer from")
    serve.add_argument("--concurrency", type=int, default=50)
    serve.add_argument("--rounds", type=int, default=3, help="bursts of concurrent streams")
    serve.add_argument("--output", help="write the JSON report here (and a .md beside it)")
    serve.add_argument("--json", action="store_true")
    serve.set_defaults(run=cmd_bench_serve)

    store = kinds.add_parser("store", help="SQLite vs PostgreSQL: SciFact, then synthetic scale")
    store.add_argument("dataset", help="the SciFact BEIR folder")
    store.add_argument(
        "--postgres",
        required=True,
        help="postgresql://… (its own schema: citewise_bench unless ?schema= names one)",
    )
    store.add_argument("--sizes", default="10000,100000", help="synthetic chunk counts")
    store.add_argument("--ef-search", type=int, default=100, help="HNSW candidate list")
    store.add_argument("--skip-scifact", action="store_true")
    store.add_argument("--output", help="also write the JSON report here")
    store.add_argument("--json", action="store_true")
    store.set_defaults(run=cmd_bench_store)
