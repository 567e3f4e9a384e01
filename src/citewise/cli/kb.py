"""`citewise kb …` and `citewise doc …`: knowledge bases of files and their documents."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from citewise.cli.common import (
    Subcommands,
    add_search_flags,
    open_kb,
    print_json,
    search_overrides,
)
from citewise.config import Settings
from citewise.kb import (
    DEFAULT_CHILD_CHARS,
    DEFAULT_QUESTIONS,
    OVERLAP_UNITS,
    STRATEGIES,
    IndexStrategy,
    KBConfig,
    KnowledgeBase,
    Library,
    SearchOptions,
)

__all__ = ["add_doc_commands", "add_kb_commands"]


def cmd_kb_create(args: argparse.Namespace, settings: Settings) -> int:
    config = KBConfig(
        strategy=IndexStrategy(
            args.strategy,
            args.parent_chars,
            args.child_chars,
            args.questions,
            overlap=args.chunk_overlap,
            overlap_unit=args.overlap_unit,
        ),  # fmt: skip
        embedder=args.embedder or settings.embedder,
        defaults=SearchOptions().merged(search_overrides(args)),
        description=args.description,
    )
    kb = KnowledgeBase.create(args.name, config, settings=settings)
    if args.json:
        print_json(kb.describe())
    else:
        print(f"created knowledge base {kb.name} ({config.strategy.name}, {config.embedder})")
    return 0


def cmd_kb_list(args: argparse.Namespace, settings: Settings) -> int:
    names = Library.shared(settings).names()
    described = [open_kb(name, settings).describe() for name in names]
    if args.json:
        print_json(described)
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
    kb = open_kb(args.name, settings)
    described = kb.describe()
    if args.json:
        print_json({**described, "documents": [d.as_json() for d in kb.documents()]})
        return 0
    for key, value in described.items():
        print(f"{key:<18} {json.dumps(value, ensure_ascii=False) if key == 'retrieval' else value}")
    return 0


def cmd_kb_delete(args: argparse.Namespace, settings: Settings) -> int:
    open_kb(args.name, settings).drop()
    print(f"deleted knowledge base {args.name}")
    return 0


def cmd_kb_search(args: argparse.Namespace, settings: Settings) -> int:
    hits = open_kb(args.name, settings).search(args.query, search_overrides(args))
    if args.json:
        print_json([hit.as_json() for hit in hits])
        return 0
    for rank, hit in enumerate(hits, start=1):
        print(
            f"{rank:>2}. {hit.score:.4f} {hit.chunk.doc_id} › {' › '.join(hit.chunk.heading_path)}"
        )
    return 0


def cmd_doc_add(args: argparse.Namespace, settings: Settings) -> int:
    parsed = Path(args.parsed) if args.parsed else None
    files = [Path(f) for f in args.files]
    report = open_kb(args.kb, settings).add_files(files, scope=args.scope, parsed=parsed)
    if args.json:
        print_json(asdict(report))
    else:
        print(report.summary())
    for failure in report.failures:
        print(f"citewise: warning: {failure}", file=sys.stderr)
    return 0


def cmd_doc_list(args: argparse.Namespace, settings: Settings) -> int:
    documents = open_kb(args.kb, settings).documents()
    if args.json:
        print_json([d.as_json() for d in documents])
        return 0
    for doc in documents:
        about = "  ".join(f"{key}={value}" for key, value in doc.metadata)
        print(f"{doc.doc_id}  {doc.title}" + (f"  [{about}]" if about else ""))
    return 0


def cmd_doc_delete(args: argparse.Namespace, settings: Settings) -> int:
    kb = open_kb(args.kb, settings)
    counts = {doc_id: kb.delete_document(doc_id) for doc_id in args.doc_ids}
    if args.json:
        print_json([{"doc_id": d, "chunks_deleted": n} for d, n in counts.items()])
        return 0
    for doc_id, count in counts.items():
        print(f"{doc_id}: {count} chunks deleted" + ("" if count else " (not in the index)"))
    return 0


def add_kb_commands(commands: Subcommands) -> None:
    """``citewise kb create|list|show|delete|search``."""
    kb = commands.add_parser("kb", help="knowledge bases of uploaded files")
    actions = kb.add_subparsers(dest="kb_command", required=True)
    create = actions.add_parser("create", help="create an empty knowledge base")
    create.add_argument("name")
    create.add_argument("--strategy", choices=STRATEGIES, default="section")
    create.add_argument("--parent-chars", type=int, default=2000, help="largest chunk (parent)")
    create.add_argument("--child-chars", type=int, default=DEFAULT_CHILD_CHARS)
    create.add_argument("--questions", type=int, default=DEFAULT_QUESTIONS, help="qa: per chunk")
    create.add_argument(
        "--chunk-overlap", type=int, default=0, help="end of a chunk the next repeats (0: none)"
    )
    create.add_argument("--overlap-unit", choices=OVERLAP_UNITS, default="chars")
    create.add_argument("--embedder", default=None, help="minilm (English) or e5 (multilingual)")
    create.add_argument("--description", default="")
    create.add_argument("--json", action="store_true")
    # Here the search flags set the knowledge base's defaults, which each search overrides.
    add_search_flags(create, title="search defaults (each search may override them)", answers=True)
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
    search = actions.add_parser("search", help="search with search options")
    search.add_argument("name", help="knowledge base")
    search.add_argument("query")
    search.add_argument("--json", action="store_true")
    add_search_flags(search)
    search.set_defaults(run=cmd_kb_search)


def add_doc_commands(commands: Subcommands) -> None:
    """``citewise doc add|list|delete``."""
    doc = commands.add_parser("doc", help="documents of a knowledge base")
    actions = doc.add_subparsers(dest="doc_command", required=True)
    add = actions.add_parser("add", help="ingest files (Markdown, HTML, PDF, DOCX, text, CSV)")
    add.add_argument("files", nargs="*")
    add.add_argument("--kb", required=True)
    add.add_argument(
        "--parsed",
        metavar="FILE",
        default=None,
        help="JSON of documents an external parser parsed (used instead of a file of the "
        "same id; schema in docs/knowledge-bases.md)",
    )
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
