"""`citewise kb …`, `citewise doc …` and `citewise bench langrag`: knowledge bases of files."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from citewise.config import Settings
from citewise.kbconfig import KBConfig
from citewise.knowledge import KnowledgeBase
from citewise.retrieval.options import RetrievalOptions, parse_options
from citewise.strategies import DEFAULT_CHILD_CHARS, DEFAULT_QUESTIONS, STRATEGIES, IndexStrategy

__all__ = ["add_bench_langrag", "add_doc_commands", "add_kb_commands"]


def _print(payload: Any) -> None:
    print(json.dumps(payload, indent=2, ensure_ascii=False))


def _describe(kb: KnowledgeBase) -> dict[str, Any]:
    return {
        "name": kb.name,
        **kb.config.as_json(),
        "documents": len(kb.documents()),
        "chunks": len(kb.store.chunk_ids(kb.name)),
    }


def cmd_kb_create(args: argparse.Namespace, settings: Settings) -> int:
    defaults: dict[str, Any] = {
        "top_k": args.top_k,
        "search_type": args.search_type,
        "query_rewrite": args.query_rewrite,
        "rerank": args.rerank,
        "context_window": args.context_window,
    }
    config = KBConfig(
        strategy=IndexStrategy(args.strategy, args.parent_chars, args.child_chars, args.questions),
        embedder=args.embedder or settings.embedder,
        defaults=RetrievalOptions().merged(defaults),
        description=args.description,
    )
    kb = KnowledgeBase.create(args.name, config, settings=settings)
    if args.json:
        _print(_describe(kb))
    else:
        print(f"created knowledge base {kb.name} ({config.strategy.name}, {config.embedder})")
    return 0


def cmd_kb_list(args: argparse.Namespace, settings: Settings) -> int:
    names = KnowledgeBase("docs", settings=settings).store.list_kbs()
    described = [_describe(KnowledgeBase(name, settings=settings)) for name in names]
    if args.json:
        _print(described)
        return 0
    if not described:
        print("No knowledge bases yet: citewise kb create NAME")
    for kb in described:
        print(
            f"{kb['name']:<24} {kb['strategy']:<13} {kb['embedder']:<8} "
            f"{kb['documents']:>5} docs {kb['chunks']:>6} chunks  {kb['description']}"
        )
    return 0


def cmd_kb_show(args: argparse.Namespace, settings: Settings) -> int:
    kb = KnowledgeBase(args.name, settings=settings)
    described = _describe(kb)
    if args.json:
        _print({**described, "documents": [asdict(d) for d in kb.documents()]})
        return 0
    for key, value in described.items():
        print(f"{key:<12} {json.dumps(value, ensure_ascii=False) if key == 'retrieval' else value}")
    return 0


def cmd_kb_delete(args: argparse.Namespace, settings: Settings) -> int:
    KnowledgeBase(args.name, settings=settings).drop()
    print(f"deleted knowledge base {args.name}")
    return 0


def cmd_doc_add(args: argparse.Namespace, settings: Settings) -> int:
    kb = KnowledgeBase(args.kb, settings=settings)
    report = kb.add_files([Path(f) for f in args.files], scope=args.scope)
    if args.json:
        _print(asdict(report))
    else:
        print(report.summary())
    for failure in report.failures:
        print(f"citewise: warning: {failure}", file=sys.stderr)
    return 0


def cmd_doc_list(args: argparse.Namespace, settings: Settings) -> int:
    documents = KnowledgeBase(args.kb, settings=settings).documents()
    if args.json:
        _print([asdict(d) for d in documents])
        return 0
    for doc in documents:
        print(f"{doc.doc_id}  {doc.title}")
    return 0


def cmd_doc_delete(args: argparse.Namespace, settings: Settings) -> int:
    kb = KnowledgeBase(args.kb, settings=settings)
    counts = {doc_id: kb.delete_document(doc_id) for doc_id in args.doc_ids}
    if args.json:
        _print([{"doc_id": d, "chunks_deleted": n} for d, n in counts.items()])
        return 0
    for doc_id, count in counts.items():
        print(f"{doc_id}: {count} chunks deleted" + ("" if count else " (not in the index)"))
    return 0


def cmd_kb_search(args: argparse.Namespace, settings: Settings) -> int:
    overrides = {
        "top_k": args.top_k,
        "search_type": args.search_type,
        "query_rewrite": args.query_rewrite,
        "rerank": args.rerank,
        "context_window": args.context_window,
        "scope": args.scope,
        "doc_ids": tuple(args.doc_id) if args.doc_id else None,
    }
    parse_options({k: v for k, v in overrides.items() if v is not None})  # fail before loading
    hits = KnowledgeBase(args.name, settings=settings).retrieve(args.query, overrides)
    if args.json:
        _print([hit.as_json() for hit in hits])
        return 0
    for rank, hit in enumerate(hits, start=1):
        print(
            f"{rank:>2}. {hit.score:.4f} {hit.chunk.doc_id} › {' › '.join(hit.chunk.heading_path)}"
        )
    return 0


def _retrieval_flags(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--top-k", type=int, default=None)
    sub.add_argument("--search-type", choices=["hybrid", "vector", "full_text"], default=None)
    sub.add_argument(
        "--query-rewrite", choices=["off", "hyde", "multi_query", "step_back"], default=None
    )
    sub.add_argument("--rerank", choices=["off", "cross_encoder", "llm"], default=None)
    sub.add_argument("--context-window", type=int, default=None, metavar="N")


def add_kb_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``citewise kb create|list|show|delete|search``."""
    kb = commands.add_parser("kb", help="knowledge bases of uploaded files")
    actions = kb.add_subparsers(dest="kb_command", required=True)
    create = actions.add_parser("create", help="create an empty knowledge base")
    create.add_argument("name")
    create.add_argument("--strategy", choices=STRATEGIES, default="section")
    create.add_argument("--parent-chars", type=int, default=2000, help="largest chunk (parent)")
    create.add_argument("--child-chars", type=int, default=DEFAULT_CHILD_CHARS)
    create.add_argument("--questions", type=int, default=DEFAULT_QUESTIONS, help="qa: per chunk")
    create.add_argument("--embedder", default=None, help="minilm (English) or e5 (multilingual)")
    create.add_argument("--description", default="")
    _retrieval_flags(create)
    create.add_argument("--json", action="store_true")
    create.set_defaults(run=cmd_kb_create)
    listing = actions.add_parser("list", help="list knowledge bases")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=cmd_kb_list)
    show = actions.add_parser("show", help="a knowledge base's settings and documents")
    show.add_argument("name")
    show.add_argument("--json", action="store_true")
    show.set_defaults(run=cmd_kb_show)
    delete = actions.add_parser("delete", help="delete a knowledge base and its index")
    delete.add_argument("name")
    delete.set_defaults(run=cmd_kb_delete)
    search = actions.add_parser("search", help="search with retrieval options")
    search.add_argument("name", help="knowledge base")
    search.add_argument("query")
    _retrieval_flags(search)
    search.add_argument("--scope", default=None)
    search.add_argument("--doc-id", action="append", default=[], help="only these documents")
    search.add_argument("--json", action="store_true")
    search.set_defaults(run=cmd_kb_search)


def add_doc_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``citewise doc add|list|delete``."""
    doc = commands.add_parser("doc", help="documents of a knowledge base")
    actions = doc.add_subparsers(dest="doc_command", required=True)
    add = actions.add_parser("add", help="ingest files (Markdown, HTML, PDF, DOCX, text, CSV)")
    add.add_argument("files", nargs="+")
    add.add_argument("--kb", required=True)
    add.add_argument("--scope", default="", help="scope the documents belong to")
    add.add_argument("--json", action="store_true")
    add.set_defaults(run=cmd_doc_add)
    listing = actions.add_parser("list", help="list a knowledge base's documents")
    listing.add_argument("--kb", required=True)
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=cmd_doc_list)
    delete = actions.add_parser("delete", help="delete documents (0 chunks if absent)")
    delete.add_argument("doc_ids", nargs="+", metavar="DOC_ID")
    delete.add_argument("--kb", required=True)
    delete.add_argument("--json", action="store_true")
    delete.set_defaults(run=cmd_doc_delete)


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


def add_bench_langrag(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``citewise bench langrag DATASET…``."""
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
