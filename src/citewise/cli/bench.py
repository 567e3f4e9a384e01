"""`citewise bench beir | embed | latency`: the benchmarks an operator runs on their own data
and hardware: retrieval quality on a BEIR-format dataset, embedder throughput, and per-stage
search latency (with synthetic knowledge bases of any size, to size a machine).

The project's own measurements (LangRAG sets, parsers, built sites, stores, the server, the
grounding check, ingest variants) are not in the product: ``python -m benchmarks.NAME`` from
a checkout (benchmarks/README.md)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from citewise.cli.common import Subcommands
from citewise.config import Settings

__all__ = ["add_bench_commands", "save_report"]


def save_report(
    output: str | None,
    report: dict[str, Any],
    markdown: Callable[[dict[str, Any]], str] | None = None,
) -> None:
    """Write ``report`` as JSON to ``output`` (nothing without one), and its Markdown beside
    it (``.md``) when ``markdown`` renders it."""
    if not output:
        return
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    if markdown is not None:
        path.with_suffix(".md").write_text(markdown(report))


# Each benchmark imports its harness when run: they pull in optional extras (rank_bm25,
# LangChain retrievers, bm25s) that no other command needs.


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
    save_report(args.output, report)
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
    save_report(args.output, report)
    print(json.dumps(report, indent=2))
    return 0


def cmd_bench_latency(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.latency import format_report, run_latency_benchmark

    def save(report: dict[str, Any]) -> None:
        save_report(args.output, report, format_report)

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


def add_bench_commands(commands: Subcommands) -> None:
    """``citewise bench beir|embed|latency``."""
    bench = commands.add_parser(
        "bench", help="benchmarks on your data and hardware: retrieval, embedders, latency"
    )
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
