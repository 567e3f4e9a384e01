"""The command line: `citewise index | search | ask | sections | bench`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from citewise.config import Settings
from citewise.errors import CitewiseError
from citewise.indexing import Progress, parse_folder
from citewise.knowledge import KnowledgeBase
from citewise.models import Hit

DEFAULT_KB = "docs"


def hit_json(hit: Hit) -> dict[str, object]:
    """A hit as the JSON the CLI (and later the API) prints."""
    return {
        "url": hit.url,
        "page": hit.chunk.page,
        "title": hit.chunk.title,
        "heading_path": list(hit.chunk.heading_path),
        "score": round(hit.score, 6),
        "rankers": list(hit.rankers),
        "text": hit.chunk.text,
    }


@contextmanager
def progress_bar(enabled: bool, label: str) -> Iterator[Progress | None]:
    """A rich progress bar on a terminal; nothing when output is piped."""
    if not enabled:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), transient=True
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int, doc_id: str) -> None:
            bar.update(task, completed=done, total=total, description=f"{label} {doc_id}")

        yield update


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    kb = KnowledgeBase(args.kb, settings=settings.with_overrides(embedder=args.embedder))
    if args.rebuild and kb.exists:
        kb.store.drop(args.kb)
    with progress_bar(sys.stderr.isatty() and not args.quiet, "Indexing") as progress:
        report = kb.index_folder(
            Path(args.folder), site_url=args.site_url, version=args.version, progress=progress
        )
    if args.json:
        print(json.dumps(asdict(report), indent=2))
    else:
        print(report.summary())
    return 0


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    kb = KnowledgeBase(args.kb, settings=settings)
    hits = kb.search(args.query, k=args.k, mode=args.mode, scope=args.scope)
    if args.json:
        print(json.dumps([hit_json(hit) for hit in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("No matching sections.")
    for rank, hit in enumerate(hits, start=1):
        rankers = "+".join(hit.rankers)
        print(f"{rank:>2}. {hit.score:.4f} [{rankers}] {' › '.join(hit.chunk.heading_path)}")
        print(f"    {hit.url}")
    return 0


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    kb = KnowledgeBase(args.kb, settings=settings)
    answer = kb.ask(args.question, k=args.k, scope=args.scope)
    if args.json:
        payload = {
            "text": answer.text,
            "kind": answer.kind,
            "annotations": [asdict(citation) for citation in answer.citations],
            "hits": [hit_json(hit) for hit in answer.hits],
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    print(answer.text)
    sources = list(dict.fromkeys((c.url, c.title) for c in answer.citations))
    if sources:
        print("\nSources:")
        for number, (url, title) in enumerate(sources, start=1):
            print(f"  [{number}] {title}\n      {url}")
    return 0


def cmd_sections(args: argparse.Namespace, settings: Settings) -> int:
    sections = parse_folder(Path(args.folder), site_url=args.site_url, version=args.version)
    for section in sections:
        if args.json:
            record = {
                "url": section.url,
                "page": section.page,
                "heading_path": list(section.heading_path),
                "level": section.level,
                "anchor": section.anchor,
                "doc_id": section.doc_id,
                "scope": section.scope,
            }
            print(json.dumps(record, ensure_ascii=False))
        else:
            print(f"{section.url}  {' › '.join(section.heading_path)}")
    return 0


def cmd_bench_beir(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.evaluation.beir import format_report, run_beir_benchmark

    def log(done: int, total: int, what: str) -> None:
        print(f"embedded {done}/{total} {what}", file=sys.stderr, flush=True)

    report = run_beir_benchmark(
        Path(args.dataset),
        settings=settings,
        embedder_name=args.embedder or settings.embedder,
        split=args.split,
        max_queries=args.max_queries,
        baselines=not args.no_baselines,
        progress=log,
    )
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citewise", description="Answer questions about a documentation set, with citations."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    index = commands.add_parser("index", help="index (or re-index) a folder of docs")
    index.add_argument("folder")
    index.add_argument("--kb", default=DEFAULT_KB, help="knowledge base name")
    index.add_argument("--site-url", default="", help="published site URL, e.g. https://x.io/")
    index.add_argument("--version", default=None, help="docs version segment in page URLs")
    index.add_argument("--embedder", default=None, help="embedder for a new knowledge base")
    index.add_argument("--rebuild", action="store_true", help="drop the index and build anew")
    index.add_argument("--json", action="store_true")
    index.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    index.set_defaults(run=cmd_index)

    def add_query_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--kb", default=DEFAULT_KB, help="knowledge base name")
        sub.add_argument("-k", type=int, default=10, help="how many sections")
        sub.add_argument("--scope", default=None, help="part of the docs to search (or all)")
        sub.add_argument("--json", action="store_true")

    search_cmd = commands.add_parser("search", help="search the docs")
    search_cmd.add_argument("query")
    search_cmd.add_argument("--mode", choices=["hybrid", "vector", "keyword"], default="hybrid")
    add_query_options(search_cmd)
    search_cmd.set_defaults(run=cmd_search)

    ask = commands.add_parser("ask", help="answer a question with cited sections")
    ask.add_argument("question")
    add_query_options(ask)
    ask.set_defaults(run=cmd_ask)

    sections = commands.add_parser("sections", help="list the sections a folder parses into")
    sections.add_argument("folder")
    sections.add_argument("--site-url", default="")
    sections.add_argument("--version", default=None)
    sections.add_argument("--json", action="store_true", help="one JSON object per line")
    sections.set_defaults(run=cmd_sections)

    bench = commands.add_parser("bench", help="retrieval benchmarks")
    bench_kinds = bench.add_subparsers(dest="bench", required=True)
    beir = bench_kinds.add_parser("beir", help="nDCG@10 / Recall@100 on a BEIR dataset")
    beir.add_argument("dataset", help="folder with corpus.jsonl, queries.jsonl, qrels/")
    beir.add_argument("--split", default="test")
    beir.add_argument("--embedder", default=None)
    beir.add_argument("--max-queries", type=int, default=None)
    beir.add_argument("--no-baselines", action="store_true", help="skip rank_bm25")
    beir.add_argument("--output", help="also write the JSON report here")
    beir.add_argument("--json", action="store_true")
    beir.set_defaults(run=cmd_bench_beir)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace, Settings], int] = args.run
    try:
        return run(args, Settings.from_env())
    except CitewiseError as error:
        print(f"citewise: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("citewise: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
