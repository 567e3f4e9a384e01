"""`citewise bench beir | embed | ingest | langrag | latency | pages | parsers | serve | sites |
store | verify`: retrieval, embedder, ingest, latency, built-page, parser, server, real-site
citation, store and grounding-check benchmarks."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from citewise.cli.common import DEFAULT_KB, Subcommands
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


def cmd_bench_langrag(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.errors import ConfigurationError
    from citewise.evaluation.langrag import format_report, run_langrag_benchmark
    from citewise.evaluation.langrag_configs import format_config_report, is_config, run_config

    # A folder is LangRAG's benchmark folder: every configuration in its configs/.
    paths: list[Path] = []
    for given in map(Path, args.paths):
        paths += sorted((given / "configs").glob("*.json")) if given.is_dir() else [given]
    configs = [path for path in paths if is_config(path)]
    datasets = [path for path in paths if path not in configs]
    if args.dataset and len(configs) != 1:
        raise ConfigurationError("--dataset pairs a set with one configuration file")
    embedders = args.embedder or ["minilm", "e5"]

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    report: dict[str, Any] = {}
    if datasets:
        report = run_langrag_benchmark(
            datasets, settings=settings, embedders=embedders, progress=progress
        )
    report["configs"] = [
        run_config(path, settings=settings, embedders=embedders, progress=progress,
                   dataset=Path(args.dataset) if args.dataset else None)
        for path in configs
    ]  # fmt: skip
    save_report(args.output, report)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        if datasets:
            print(format_report(report))
        print("\n".join(format_config_report(config) for config in report["configs"]))
    return 0


def cmd_bench_parsers(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.parser_compare import format_report, run_parser_compare

    report = run_parser_compare(
        Path(args.dataset),
        Path(args.config) if args.config else None,
        settings=settings,
        embedders=args.embedder or ["e5", "minilm"],
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    save_report(args.output, report)
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else format_report(report))
    return 0


def cmd_bench_ingest(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.ingest_bench import format_report, run_ingest_benchmark

    report = run_ingest_benchmark(
        Path(args.dataset),
        settings=settings,
        documents=args.documents,
        rounds=args.rounds,
        batch_sizes=[int(n) for n in args.batch_sizes.split(",") if n],
        threads=[int(n) for n in args.threads.split(",") if n],
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    save_report(args.output, report, format_report)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
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


def cmd_bench_serve(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.server.bench import format_report, run_serve_benchmark

    report = run_serve_benchmark(
        settings, kb=args.kb, concurrency=args.concurrency, rounds=args.rounds
    )
    save_report(args.output, report, format_report)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def cmd_bench_sites(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.sites import format_report, run_sites_benchmark

    report = run_sites_benchmark(
        Path(args.root),
        only=args.only or None,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
        manifest=Path(args.manifest) if args.manifest else None,
    )
    only = f" --only {' '.join(args.only)}" if args.only else ""
    manifest = f" --manifest {args.manifest}" if args.manifest else ""
    report["command"] = f"citewise bench sites --root {args.root}{manifest}{only}"
    save_report(args.output, report, format_report)
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else format_report(report))
    return 0


def cmd_bench_pages(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.page_bench import (
        BuiltSite,
        format_report,
        load_parser,
        root_sites,
        run_pages_benchmark,
    )

    if args.built:
        if not (args.truth and args.base_url):
            print("bench pages: --built needs --truth and --base-url", file=sys.stderr)
            return 2
        sites = [BuiltSite(Path(args.built).name, Path(args.built), Path(args.truth),
                           args.base_url, args.generator)]  # fmt: skip
    elif args.root:
        sites = root_sites(Path(args.root), args.only or None)
    else:
        print("bench pages: give --root, or --built with --truth and --base-url", file=sys.stderr)
        return 2
    report = run_pages_benchmark(
        sites,
        load_parser(Path(args.parser) if args.parser else None),
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    report["command"] = "citewise bench pages " + " ".join(sys.argv[3:])
    save_report(args.output, report, format_report)
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else format_report(report))
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
    save_report(args.output, report)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def cmd_bench_verify(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.verify_bench import format_report, run_verify_benchmark
    from citewise.kb import Library

    kb = Library.shared(settings).open(args.kb)
    report = run_verify_benchmark(kb, Path(args.cases), Path(args.answers), rounds=args.rounds)
    save_report(args.output, report, format_report)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def add_bench_commands(commands: Subcommands) -> None:
    """``citewise bench beir|embed|ingest|langrag|latency|pages|parsers|serve|sites|store|
    verify``."""
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

    ingest = kinds.add_parser(
        "ingest", help="indexing speed: character vs token windows, batch sizes, threads"
    )
    ingest.add_argument("dataset", help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)")
    ingest.add_argument("--documents", type=int, default=300, help="documents in the sample")
    ingest.add_argument("--rounds", type=int, default=2, help="interleaved rounds (median)")
    ingest.add_argument("--batch-sizes", default="16,32,64", help="comma-separated")
    ingest.add_argument("--threads", default="0", help="comma-separated; 0 = one per CPU")
    ingest.add_argument("--output", help="also write the JSON report here (and a .md beside)")
    ingest.add_argument("--json", action="store_true")
    ingest.set_defaults(run=cmd_bench_ingest)

    langrag = kinds.add_parser(
        "langrag", help="hit/all-relevant/precision/recall/MRR/nDCG@1,3,5 on LangRAG sets"
    )
    langrag.add_argument(
        "paths", nargs="+", metavar="PATH",
        help="LangRAG configs/<config>.json (run as written on the set it was written for), "
        "datasets/<set>.json (citewise's own plan), or the langrag-benchmarks folder",
    )  # fmt: skip
    langrag.add_argument(
        "--dataset", help="the set to run one configuration file on (default: its own)"
    )
    langrag.add_argument(
        "--embedder", action="append", default=[], help="repeatable (default: minilm and e5)"
    )
    langrag.add_argument("--output", help="also write the JSON report here")
    langrag.add_argument("--json", action="store_true")
    langrag.set_defaults(run=cmd_bench_langrag)

    parsers = kinds.add_parser(
        "parsers", help="a LangRAG parser comparison set through every citewise parser"
    )
    parsers.add_argument("dataset", help="langrag-benchmarks/datasets/parser_compare_zh.json")
    parsers.add_argument(
        "--config", default=None, help="LangRAG config (default: ../configs/parser_compare.json)"
    )
    parsers.add_argument(
        "--embedder", action="append", default=[], help="repeatable (default: e5 and minilm)"
    )
    parsers.add_argument("--output", help="also write the JSON report here")
    parsers.add_argument("--json", action="store_true")
    parsers.set_defaults(run=cmd_bench_parsers)

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

    sites = kinds.add_parser(
        "sites", help="citations against real sites' built ground truth: broken and missed"
    )
    sites.add_argument(
        "--root", required=True,
        help="conformance root: one folder per site with site.json and _site-truth.json "
        "(benchmarks/sites/build_sites.py makes it)",
    )  # fmt: skip
    sites.add_argument(
        "--manifest", metavar="TOML",
        help="the sites the root should hold (benchmarks/sites/sites.toml): missing ones are "
        "reported",
    )  # fmt: skip
    sites.add_argument(
        "--only", nargs="+", metavar="NAME", help="these sites (folder or site name) only"
    )
    sites.add_argument("--output", help="write the JSON report here (and a .md beside it)")
    sites.add_argument("--json", action="store_true")
    sites.set_defaults(run=cmd_bench_sites)

    pages = kinds.add_parser(
        "pages", help="built sites parsed page by page: anchors on their page, truth indexed"
    )
    pages.add_argument(
        "--root", help="conformance root (NAME-VERSION/site.json, builds in .build/NAME/site)"
    )
    pages.add_argument("--only", nargs="+", metavar="NAME", help="these sites only")
    pages.add_argument("--built", help="one built site's HTML folder instead of a root")
    pages.add_argument("--truth", help="with --built: its _site-truth.json")
    pages.add_argument("--base-url", help="with --built: the URL the site is published at")
    pages.add_argument("--generator", default="sphinx", choices=("sphinx", "mkdocs"),
                       help="with --built: how to read its truth")  # fmt: skip
    pages.add_argument(
        "--parser", metavar="HTML_PY",
        help="measure another version of parsing/html.py (a baseline) instead of this one",
    )  # fmt: skip
    pages.add_argument("--output", help="write the JSON report here (and a .md beside it)")
    pages.add_argument("--json", action="store_true")
    pages.set_defaults(run=cmd_bench_pages)

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

    check = kinds.add_parser(
        "verify", help="the grounding check: speed on 2,000-character answers, thresholds"
    )
    check.add_argument("cases", help="question cases (e.g. ../shared/data/lgos-dev-cases.json)")
    check.add_argument(
        "--answers",
        default="tests/data/lgos-dev-answers.json",
        help="written answers per case id (JSON; {docs} stands for its _docs URL)",
    )
    check.add_argument("--kb", default=DEFAULT_KB, help="knowledge base the cases ask")
    check.add_argument("--rounds", type=int, default=50, help="timed runs per case")
    check.add_argument("--output", help="write the JSON report here (and a .md beside it)")
    check.add_argument("--json", action="store_true")
    check.set_defaults(run=cmd_bench_verify)
