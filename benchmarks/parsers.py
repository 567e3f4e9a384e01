"""`python -m benchmarks.parsers`: a LangRAG parser comparison set through every citewise
parser that applies, side by side.

LangRAG's ``parser_compare_zh`` set gives each document three ways: ``raw_content`` (the HTML
file), ``content`` (flat text, what a fallback parser keeps) and ``sections`` (the external
GeneralParsers output: heading, level, page, content). Each becomes a citewise ingest:

- ``html``: the raw file through citewise's HTML parser (tables as Markdown, ``alt`` text);
- ``text``: the flat content as a ``.txt`` file (no structure, LangRAG's "internal" mode);
- ``markdown``: title, content and sections as one Markdown file (``benchmarks.langrag``'s form);
- ``parsed``: the sections as pre-parsed content (``doc add --parsed``, "general_parsers");
- ``markitdown``: the raw file converted by markitdown, an external parser from PyPI (in the
  ``dev`` extra), its Markdown split at headings into pre-parsed sections
  (``benchmarks/external_parser.py``); left out when markitdown is not installed.

Each runs under each index configuration of the set's LangRAG config file
(``configs/parser_compare.json``), scored at document level (hit, MRR, nDCG) and at heading
level (a retrieved chunk under a relevant heading), with what each parser kept of the raw
file's image alt texts and table cells.
"""

from __future__ import annotations

import html
import json
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.external_parser import EXTERNAL, markitdown_document
from benchmarks.langrag import document_source, load_set
from citewise.config import Settings
from citewise.errors import SourceError
from citewise.evaluation.metrics import evaluate_at
from citewise.kb import IndexStrategy, KBConfig, KnowledgeBase

__all__ = [
    "PARSERS", "Experiment", "format_report", "load_experiments", "main", "run_parser_compare",
]  # fmt: skip

PARSERS = ("html", "text", "markdown", "parsed", EXTERNAL)
# citewise's smallest parent chunk; LangRAG's 140-character chunks are raised to it.
_MIN_PARENT = 200
_DEPTH = 30
_ALT_RE = re.compile(r"""<img\b[^>]*\balt\s*=\s*(["'])(.*?)\1""", re.IGNORECASE | re.DOTALL)
_CELL_RE = re.compile(r"<t[dh]\b[^>]*>(.*?)</t[dh]>", re.IGNORECASE | re.DOTALL)
_TAG_RE = re.compile(r"<[^>]+>")
_PARSERS_NOTE = (
    "Parsers: html = the raw file through citewise's HTML parser; text = the flat content "
    "(LangRAG's internal mode); markdown = title, content and sections as Markdown; parsed = "
    "the sections as pre-parsed content (LangRAG's general_parsers mode); markitdown = the raw "
    "file converted by markitdown (PyPI), split at its headings, as pre-parsed content."
)


@dataclass(frozen=True)
class Experiment:
    """One LangRAG configuration as citewise runs it: index strategy and search options."""

    name: str
    strategy: IndexStrategy
    options: dict[str, Any]
    notes: tuple[str, ...] = ()


def load_experiments(path: Path) -> tuple[list[Experiment], list[int]]:
    """The distinct index configurations of a LangRAG config file, and its k values.

    ``chunk`` indexing is citewise's ``section`` strategy at the chunk size (at least 200),
    ``parent_child`` its own; LangRAG's overlap is the strategy's (in characters; between
    parents for ``parent_child``) and its ``vector_weight`` the hybrid search's. LangRAG's
    parser mode is what this benchmark varies, so experiments that differ only in it are
    run once. What citewise changes (a chunk size below its minimum) is in the notes.
    """
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        given = config["experiments"]
    except (OSError, ValueError, KeyError) as error:
        raise SourceError(f"{path}: not a LangRAG config file ({error!r})") from None
    ks = [int(k) for k in config.get("metrics", {}).get("k_values", [1, 3])]
    found: dict[tuple[Any, ...], Experiment] = {}
    for entry in given:
        creation = entry.get("creation_settings", {})
        retrieval = entry.get("retrieval_settings", {})
        notes = []
        overlap = int(creation.get("overlap", 0))
        if creation.get("index_type") == "parent_child":
            strategy = IndexStrategy(
                "parent_child",
                parent_chars=max(int(creation.get("parent_chunk_size", 2000)), _MIN_PARENT),
                child_chars=int(creation.get("child_chunk_size", 300)),
                overlap=overlap,
            )
            if overlap:
                notes.append(f"overlap {overlap} between parents")
        else:
            size = int(creation.get("chunk_size", 2000))
            strategy = IndexStrategy(
                "section", parent_chars=max(size, _MIN_PARENT), overlap=overlap
            )
            if size < _MIN_PARENT:
                notes.append(f"chunk_size {size} raised to {_MIN_PARENT}")
        options: dict[str, Any] = {
            "search_type": retrieval.get("search_type", "hybrid"),
            "query_rewrite": retrieval.get("query_rewrite", "off"),
        }
        if "vector_weight" in retrieval and options["search_type"] == "hybrid":
            options["vector_weight"] = float(retrieval["vector_weight"])
        key = (strategy, tuple(sorted(options.items())))
        if key not in found:
            name = f"{strategy.name} {strategy.parent_chars}"
            if strategy.name == "parent_child":
                name += f"/{strategy.child_chars}"
            found[key] = Experiment(f"{name} {options['search_type']}", strategy, options,
                                    tuple(notes))  # fmt: skip
    return list(found.values()), ks


def ingest(kb: KnowledgeBase, parser: str, documents: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Add ``documents`` the way ``parser`` names; the citewise doc id → the set's doc id."""
    if parser == EXTERNAL:
        converted = [
            markitdown_document(f"{doc['id']}.html", doc.get("raw_content", "").encode(), ".html")
            for doc in documents
        ]
        kb.add_upload([], parsed=json.dumps({"documents": converted}).encode())
        return {f"{doc['id']}.html": doc["id"] for doc in documents}
    if parser == "parsed":
        parsed = [
            {"id": f"{doc['id']}.html", "title": doc.get("title", ""),
             "text": doc.get("content", ""), "sections": doc.get("sections", [])}
            for doc in documents
        ]  # fmt: skip
        kb.add_upload([], parsed=json.dumps({"documents": parsed}).encode())
        return {f"{doc['id']}.html": doc["id"] for doc in documents}
    if parser == "html":
        sources = [document_source(doc) for doc in documents]
    elif parser == "markdown":
        sources = [document_source({**doc, "raw_content": ""}) for doc in documents]
    else:
        sources = [
            document_source({"id": doc["id"], "raw_content": doc.get("content", ""),
                             "filename": "x.txt"})
            for doc in documents
        ]  # fmt: skip
    kb.add_documents(sources)
    return {source.doc_id: doc["id"] for source, doc in zip(sources, documents, strict=True)}


def kept(documents: Sequence[dict[str, Any]], texts: Sequence[str]) -> dict[str, float | None]:
    """Of the raw files' image alt texts and table cells, the share found in ``texts``."""
    indexed = " ".join(" ".join(texts).split())
    alts = [
        _plain(m.group(2)) for d in documents for m in _ALT_RE.finditer(d.get("raw_content", ""))
    ]
    cells = [
        _plain(m.group(1)) for d in documents for m in _CELL_RE.finditer(d.get("raw_content", ""))
    ]

    def share(items: list[str]) -> float | None:
        items = [item for item in items if item]
        return round(sum(item in indexed for item in items) / len(items), 4) if items else None

    return {"alt_text_kept": share(alts), "table_cells_kept": share(cells)}


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(_TAG_RE.sub(" ", fragment)).split())


def available_parsers() -> tuple[str, ...]:
    """:data:`PARSERS`, less the external one when markitdown is not installed."""
    import importlib.util

    if importlib.util.find_spec("markitdown") is None:
        return tuple(p for p in PARSERS if p != EXTERNAL)
    return PARSERS


def run_parser_compare(
    dataset: Path,
    config: Path | None,
    *,
    settings: Settings,
    embedders: Sequence[str] = ("e5", "minilm"),
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every parser × configuration × embedder on the set: a JSON-ready report."""
    data = load_set(dataset)
    config = config or dataset.parent.parent / "configs" / "parser_compare.json"
    experiments, ks = load_experiments(config)
    documents, queries = data["documents"], data["queries"]
    qrels = {q["id"]: dict.fromkeys(q["relevant_document_ids"], 1) for q in queries}
    headings = {q["id"]: set(q.get("relevant_headings", [])) for q in queries}
    rows: list[dict[str, Any]] = []
    for embedder in embedders:
        with tempfile.TemporaryDirectory(prefix="citewise-parsers-") as tmp:
            local = Settings(home=Path(tmp), embedder=embedder)
            for experiment in experiments:
                for parser in available_parsers():
                    rows.append(_measure(local, embedder, experiment, parser, documents,
                                         queries, qrels, headings, ks))  # fmt: skip
                    if progress is not None:
                        progress(f"{embedder} {experiment.name} {parser}: done")
    return {
        "set": data.get("id", dataset.stem),
        "config": str(config.name),
        "documents": len(documents),
        "queries": len(queries),
        "ks": ks,
        "experiments": {e.name: list(e.notes) for e in experiments},
        "rows": rows,
    }


def _measure(
    settings: Settings,
    embedder: str,
    experiment: Experiment,
    parser: str,
    documents: Sequence[dict[str, Any]],
    queries: Sequence[dict[str, Any]],
    qrels: dict[str, dict[str, int]],
    headings: dict[str, set[str]],
    ks: Sequence[int],
) -> dict[str, Any]:
    name = f"bench-{parser}-{experiment.strategy.name.replace('_', '-')}"
    kb = KnowledgeBase.create(name, KBConfig(strategy=experiment.strategy, embedder=embedder),
                              settings=settings)  # fmt: skip
    try:
        doc_of = ingest(kb, parser, documents)
        texts = [kb.document_text(doc_id) or "" for doc_id in doc_of]
        ranked: dict[str, list[str]] = {}
        heading_hits = dict.fromkeys((f"heading_hit@{k}" for k in ks), 0.0)
        for query in queries:
            hits = kb.search(query["query"], {**experiment.options, "top_k": _DEPTH})
            ranked[query["id"]] = list(dict.fromkeys(doc_of[h.chunk.doc_id] for h in hits))
            for k in ks:
                found = any(headings[query["id"]] & set(h.chunk.heading_path) for h in hits[:k])
                heading_hits[f"heading_hit@{k}"] += found / len(queries)
        scores = evaluate_at(ranked, qrels, ks)
        chunks = kb.describe().get("chunks", 0)
    finally:
        kb.drop()
    top = max(ks)
    picked = {m: scores[m] for m in scores if m.split("@")[0] in ("hit", "ndcg")}
    picked[f"mrr@{top}"] = scores[f"mrr@{top}"]
    return {
        "embedder": embedder,
        "configuration": experiment.name,
        "parser": parser,
        "chunks": chunks,
        **{k: round(v, 4) for k, v in {**picked, **heading_hits}.items()},
        **kept(documents, texts),
    }


def format_report(report: dict[str, Any]) -> str:
    """One Markdown table: a row per embedder, configuration and parser."""
    ks = report["ks"]
    metrics = [f"{m}@{k}" for m in ("hit", "ndcg", "heading_hit") for k in ks]
    metrics.insert(len(ks), f"mrr@{max(ks)}")
    columns = ["chunks", *metrics, "alt_text_kept", "table_cells_kept"]
    lines = [
        f"### {report['set']} ({report['documents']} documents, {report['queries']} queries; "
        f"configurations from {report['config']})",
        "",
        "| embedder | configuration | parser | " + " | ".join(columns) + " |",
        "|---|---|---|" + "---:|" * len(columns),
    ]
    for row in report["rows"]:
        cells = [_cell(row.get(c)) for c in columns]
        lines.append(f"| {row['embedder']} | {row['configuration']} | {row['parser']} | "
                     + " | ".join(cells) + " |")  # fmt: skip
    lines += ["", _PARSERS_NOTE]
    notes = [f"{name}: {', '.join(n)}" for name, n in report["experiments"].items() if n]
    if notes:
        lines += ["", "Differences from LangRAG's settings: " + "; ".join(notes) + "."]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.parsers DATASET``: every parser side by side on the set."""
    cli = common.parser("benchmarks.parsers", __doc__)
    cli.add_argument("dataset", help="langrag-benchmarks/datasets/parser_compare_zh.json")
    cli.add_argument(
        "--config", default=None, help="LangRAG config (default: ../configs/parser_compare.json)"
    )
    cli.add_argument(
        "--embedder", action="append", default=[], help="repeatable (default: e5 and minilm)"
    )
    common.add_report_options(cli, markdown_beside=False)
    args = cli.parse_args(argv)

    def run() -> int:
        report = run_parser_compare(
            Path(args.dataset),
            Path(args.config) if args.config else None,
            settings=Settings.from_env(),
            embedders=args.embedder or ["e5", "minilm"],
            progress=common.log,
        )
        common.save_report(args.output, report)
        common.print_report(args, report, format_report)
        return 0

    return common.guarded("benchmarks.parsers", run)


if __name__ == "__main__":
    sys.exit(main())
