"""The command line: `citewise index | search | ask | sections | serve | mcp | bench`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from citewise.cli_kb import add_bench_langrag, add_doc_commands, add_kb_commands
from citewise.cli_serve import add_bench_serve, add_serve_commands
from citewise.config import RequestSettings, Settings
from citewise.errors import CitewiseError, ConfigurationError
from citewise.indexing import Progress, parse_folder
from citewise.knowledge import KnowledgeBase
from citewise.llm import chat_model_configured
from citewise.models import Answer

DEFAULT_KB = "docs"


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
    from citewise.sources.nav import ScopeRule

    if args.release:
        return _index_release(args, settings)
    if args.folder is None:
        raise ConfigurationError("give a FOLDER to index, or --release OWNER/REPO@VERSION")
    settings = settings.with_overrides(embedder=args.embedder)
    kb = KnowledgeBase(args.kb or DEFAULT_KB, settings=settings)
    if args.rebuild and kb.exists:
        kb.store.drop(kb.name)
    with progress_bar(sys.stderr.isatty() and not args.quiet, "Indexing") as progress:
        report = kb.index_folder(
            Path(args.folder),
            site_url=args.site_url,
            version=args.version,
            progress=progress,
            scope_rule=ScopeRule(separate=tuple(args.separate_scope)),
        )
    if args.json:
        print(json.dumps(asdict(report), indent=2))
    else:
        print(report.summary())
    return 0


def _index_release(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here so the other commands never load httpx or the release machinery.
    from citewise.sources.nav import ScopeRule
    from citewise.sources.release import ReleaseSpec, index_release

    if args.folder is not None or args.version is not None:
        raise ConfigurationError("--release takes no FOLDER or --version: the release names both")
    spec = ReleaseSpec.parse(
        args.release,
        site_url=args.site_url or None,
        versions_url=args.versions_url,
        archive_url=args.archive_url,
        fallback_latest=args.fallback == "latest",
        docs_dir=args.docs_dir,
        scope_rule=ScopeRule(separate=tuple(args.separate_scope)),
    )
    settings = settings.with_overrides(embedder=args.embedder)
    with progress_bar(sys.stderr.isatty() and not args.quiet, "Indexing") as progress:
        result = index_release(
            spec, settings, kb_name=args.kb, rebuild=args.rebuild, refresh=args.refresh,
            progress=progress,
        )  # fmt: skip
    fetched = result.release
    if args.json:
        print(json.dumps({**asdict(result.report), **fetched.meta()}, indent=2))
        return 0
    print(result.report.summary())
    resolved = fetched.resolved
    how = {
        "normalized": f"published as {resolved.version}",
        "alias": "alias",
        "development": "development version, latest docs",
        "fallback": "not published, latest docs",
    }.get(resolved.how)
    print(f"release {resolved.version}" + (f" (for {resolved.requested}: {how})" if how else ""))
    return 0


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    kb = KnowledgeBase(args.kb, settings=settings)
    hits = kb.search(args.query, k=args.k, mode=args.mode, scope=args.scope)
    if args.json:
        print(json.dumps([hit.as_json() for hit in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("No matching sections.")
    for rank, hit in enumerate(hits, start=1):
        rankers = "+".join(hit.rankers)
        print(f"{rank:>2}. {hit.score:.4f} [{rankers}] {' › '.join(hit.chunk.heading_path)}")
        print(f"    {hit.url}")
    return 0


NO_MODEL_HINT = (
    "citewise: no chat model is configured, so this answer quotes the docs. For written "
    "answers set CITEWISE_LLM_MODEL (with CITEWISE_LLM_BASE_URL and CITEWISE_LLM_API_KEY for "
    "an OpenAI-compatible endpoint), or CITEWISE_LLM_MODEL=local for a local GGUF model."
)


def read_history(path: str | None) -> list[dict[str, str]]:
    """Earlier turns from a JSON file: a list of ``{"role", "content"}`` messages."""
    if path is None:
        return []
    try:
        turns = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"--history {path}: {error}") from error
    roles = ("user", "assistant", "system")
    if not isinstance(turns, list) or not all(
        isinstance(t, dict) and t.get("role") in roles and isinstance(t.get("content"), str)
        for t in turns
    ):
        raise ConfigurationError(
            f'--history {path}: expected a JSON list of {{"role", "content"}} messages'
        )
    return turns


def stream_ask(args: argparse.Namespace, kb: KnowledgeBase, settings: Settings) -> Answer:
    """Run the answer workflow: status lines on stderr, the answer streamed to stdout
    (unless ``--json``)."""
    from citewise.answering import Done, Status, TextDelta, stream_answer
    from citewise.llm import chat_model

    messages = [*read_history(args.history), {"role": "user", "content": args.question}]
    request = RequestSettings(scope=args.scope or "all", k=args.k)
    answer: Answer | None = None
    model = chat_model(settings)
    for event in stream_answer(messages, kb, model, settings=request, workflow=args.model):
        if isinstance(event, Status):
            print(f"· {event.text}", file=sys.stderr, flush=True)
        elif isinstance(event, TextDelta) and not args.json:
            print(event.text, end="", flush=True)
        elif isinstance(event, Done):
            answer = event.answer
    assert answer is not None  # stream_answer always ends with Done or raises
    if not args.json:
        print()
    return answer


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    kb = KnowledgeBase(args.kb, settings=settings)
    streamed = chat_model_configured(settings)
    if streamed:
        answer = stream_ask(args, kb, settings)
    else:
        print(NO_MODEL_HINT, file=sys.stderr)
        answer = kb.ask(args.question, k=args.k, scope=args.scope)
    if args.json:
        payload = {
            "text": answer.text,
            "kind": answer.kind,
            "queries": list(answer.queries),
            "annotations": [asdict(citation) for citation in answer.citations],
            "hits": [hit.as_json() for hit in answer.hits],
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    if not streamed:
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
        max_docs=args.max_docs,
        baselines=not args.no_baselines,
        progress=log,
    )
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.errors import ConfigurationError
    from citewise.evaluation.harness import run_assistant_eval, run_retrieval_eval
    from citewise.llm import chat_model

    kb = KnowledgeBase(args.kb, settings=settings)
    out_dir = Path(args.output) if args.output else None
    model = chat_model(settings)
    if args.retrieval_only:
        outcome = run_retrieval_eval(
            Path(args.cases), kb, modes=args.modes.split(","), runs=args.runs,
            out_dir=out_dir, model=model,
        )  # fmt: skip
    else:
        if model is None:
            raise ConfigurationError(
                "a full evaluation runs the assistant and needs a chat model "
                "(CITEWISE_LLM_MODEL); use --retrieval-only to evaluate search alone"
            )
        judge = None
        if args.judge_model:
            judge = chat_model(settings.with_overrides(llm_model=args.judge_model))
        outcome = run_assistant_eval(
            Path(args.cases), kb, model, judge=judge, workflow=args.workflow,
            runs=args.runs, out_dir=out_dir,
        )  # fmt: skip
    print(outcome.text)
    for path in outcome.written:
        print(f"wrote {path}")
    return 1 if len(outcome.failed_cases) > args.max_failures else 0


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citewise", description="Answer questions about a documentation set, with citations."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    index = commands.add_parser("index", help="index (or re-index) a folder of docs or a release")
    index.add_argument("folder", nargs="?", help="docs folder (not with --release)")
    index.add_argument("--kb", default=None, help="knowledge base (default: docs, REPO-RELEASE)")
    index.add_argument("--site-url", default="", help="published site URL, e.g. https://x.io/")
    index.add_argument("--version", default=None, help="docs version segment in page URLs")
    index.add_argument("--release", help="index a published release: OWNER/REPO@VERSION")
    index.add_argument("--versions-url", help="versions.json URL ({site_url}versions.json)")
    index.add_argument("--archive-url", help="archive URL template: {owner} {repo} {version}")
    index.add_argument("--fallback", choices=["latest"], help="unpublished: use the latest docs")
    index.add_argument("--docs-dir", default="docs", help="docs folder inside the archive")
    index.add_argument("--refresh", action="store_true", help="fetch versions.json again")
    index.add_argument(
        "--separate-scope", action="append", default=[], metavar="SECTION",
        help="keep this nav section (scope name or title) out of the main 'library' scope",
    )  # fmt: skip
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
    ask.add_argument(
        "--model",
        choices=["citewise-rag", "citewise-agentic"],
        default="citewise-rag",
        help="answer workflow when a chat model is configured",
    )
    ask.add_argument(
        "--history", metavar="FILE", help='earlier turns: JSON list of {"role", "content"}'
    )
    ask.set_defaults(run=cmd_ask)

    sections = commands.add_parser("sections", help="list the sections a folder parses into")
    sections.add_argument("folder")
    sections.add_argument("--site-url", default="")
    sections.add_argument("--version", default=None)
    sections.add_argument("--json", action="store_true", help="one JSON object per line")
    sections.set_defaults(run=cmd_sections)

    evaluate = commands.add_parser("eval", help="evaluate question cases against a kb")
    evaluate.add_argument("cases", help="cases JSON (messages, settings, parts, reply)")
    evaluate.add_argument("--kb", default=DEFAULT_KB, help="knowledge base name")
    evaluate.add_argument(
        "--retrieval-only", action="store_true", help="no chat model: search the last message"
    )
    evaluate.add_argument("--modes", default="vector,keyword,hybrid", help="search modes")
    evaluate.add_argument("--runs", type=int, default=1, help="repeat each case N times")
    evaluate.add_argument("--output", help="folder for results.json, report.md, recall.png")
    evaluate.add_argument(
        "--max-failures", type=int, default=0, help="failed cases allowed before exit 1"
    )
    evaluate.add_argument(
        "--workflow", default="citewise-rag", choices=["citewise-rag", "citewise-agentic"]
    )
    evaluate.add_argument(
        "--judge-model", help="judge reply shapes with this model (same endpoint)"
    )
    evaluate.set_defaults(run=cmd_eval)

    bench = commands.add_parser("bench", help="retrieval benchmarks")
    bench_kinds = bench.add_subparsers(dest="bench", required=True)
    beir = bench_kinds.add_parser("beir", help="nDCG@10 / Recall@100 on a BEIR dataset")
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
    embed = bench_kinds.add_parser("embed", help="embedder throughput on the same passages")
    embed.add_argument("dataset", help="BEIR folder (corpus.jsonl, queries.jsonl)")
    embed.add_argument("--embedders", default="minilm,e5")
    embed.add_argument("--passages", type=int, default=64)
    embed.add_argument("--output", help="also write the JSON report here")
    embed.set_defaults(run=cmd_bench_embed)
    add_bench_langrag(bench_kinds)
    add_bench_serve(bench_kinds)
    add_serve_commands(commands)

    add_kb_commands(commands)
    add_doc_commands(commands)
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
