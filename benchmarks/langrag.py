"""`python -m benchmarks.langrag`: LangBot LangRAG's retrieval benchmark sets, per strategy and
option.

A set (``langrag-benchmarks/datasets/*.json``) has ``documents`` (``id``, ``title``,
``content``, optional ``sections`` and, for the parser sets, ``raw_content`` HTML with its
``filename``) and ``queries`` judged at document level (``relevant_document_ids``). Each
document goes through the same upload path as ``citewise doc add``: raw HTML as the HTML file
it is; otherwise a Markdown file, the title as its h1, the content under it and each parsed
section (LangRAG's "preparsed" input) as an h2 after it. A ranking of chunks becomes a ranking
of documents (first appearance), scored by hit, all-relevant, precision, recall, MRR and nDCG
at 1, 3 and 5.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import common
from citewise.config import Settings
from citewise.errors import ConfigurationError, SourceError
from citewise.evaluation.metrics import evaluate_at
from citewise.kb import (
    IndexStrategy,
    KBConfig,
    KnowledgeBase,
    model_configured,
    source_from_bytes,
)
from citewise.sources import SourceFile

KS = (1, 3, 5)
# Chunks retrieved per query: enough that five distinct documents survive de-duplication.
_DEPTH = 30
# LangRAG's own configurations on hard_multihop_zh (hit@3 / all_relevant@3 / nDCG@3).
LANGRAG_REFERENCE = {
    "hard_multihop_zh": {
        "vector": {"hit@3": 0.80, "all_relevant@3": 0.50, "ndcg@3": 0.60},
        "hybrid": {"hit@3": 0.80, "all_relevant@3": 0.50, "ndcg@3": 0.60},
        "full_text": {"hit@3": 0.90, "all_relevant@3": 0.70, "ndcg@3": 0.70},
    }
}
# Child size for parent_child here: LangRAG's sets use 90-110 character children, and these
# documents (50-270 characters) would otherwise be one child each, the same as `section`.
BENCH_CHILD_CHARS = 120


@dataclass(frozen=True)
class Run:
    """One configuration measured: a strategy and the retrieval options of each search."""

    strategy: str
    options: dict[str, Any]

    @property
    def name(self) -> str:
        extras = [f"{k}={v}" for k, v in self.options.items() if k != "search_type"]
        return " ".join([self.strategy, self.options["search_type"], *extras])


def load_set(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["documents"], data["queries"]  # noqa: B018 - both are required
    except (OSError, ValueError, KeyError) as error:
        raise SourceError(f"{path}: not a LangRAG benchmark set ({error!r})") from None
    assert isinstance(data, dict)
    return data


def document_source(doc: dict[str, Any]) -> SourceFile:
    """A benchmark document as the file a user would upload."""
    if doc.get("raw_content"):
        suffix = Path(doc.get("filename") or "x.html").suffix or ".html"
        return source_from_bytes(f"{doc['id']}{suffix}", doc["raw_content"].encode())
    parts = [f"# {doc.get('title') or doc['id']}", doc.get("content", "")]
    for section in doc.get("sections", []):
        parts += [f"## {section.get('heading') or 'Section'}", section.get("content", "")]
    return source_from_bytes(f"{doc['id']}.md", "\n\n".join(parts).encode())


def runs(model_available: bool) -> tuple[list[Run], list[str]]:
    """The configurations to measure, and those skipped (with why)."""
    chosen = [Run("section", {"search_type": t}) for t in ("vector", "full_text", "hybrid")]
    chosen += [Run("parent_child", {"search_type": t}) for t in ("vector", "hybrid")]
    chosen.append(Run("section", {"search_type": "hybrid", "context_window": 1}))
    llm_runs = [Run("qa", {"search_type": "hybrid"})]
    llm_runs += [
        Run("section", {"search_type": "hybrid", "query_rewrite": r})
        for r in ("hyde", "multi_query", "step_back")
    ]
    llm_runs.append(Run("section", {"search_type": "hybrid", "rerank": "llm"}))
    if model_available:
        return chosen + llm_runs, []
    return chosen, [f"{run.name}: no chat model configured" for run in llm_runs]


def _strategy(name: str) -> IndexStrategy:
    if name == "parent_child":
        return IndexStrategy("parent_child", child_chars=BENCH_CHILD_CHARS)
    return IndexStrategy(name)


def run_set(
    data: dict[str, Any],
    settings: Settings,
    embedder: str,
    plan: Sequence[Run],
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every run of ``plan`` on one set with one embedder: metrics per run."""
    qrels = {q["id"]: dict.fromkeys(q["relevant_document_ids"], 1) for q in data["queries"]}
    sources = [document_source(doc) for doc in data["documents"]]
    doc_of = {
        source.doc_id: doc["id"] for source, doc in zip(sources, data["documents"], strict=True)
    }
    results: dict[str, Any] = {}
    kbs: dict[str, KnowledgeBase] = {}
    for run in plan:
        kb = kbs.get(run.strategy)
        if kb is None:
            started = time.perf_counter()
            config = KBConfig(strategy=_strategy(run.strategy), embedder=embedder)
            kb = KnowledgeBase.create(
                f"bench-{run.strategy.replace('_', '-')}", config, settings=settings
            )
            report = kb.add_documents(sources)
            if report.failures:
                results[f"{run.strategy} (ingest)"] = {"failures": report.failures}
            kbs[run.strategy] = kb
            if progress is not None:
                progress(
                    f"{data['id']} {embedder} {run.strategy}: indexed {report.chunks} chunks "
                    f"in {time.perf_counter() - started:.1f}s"
                )
        ranked: dict[str, list[str]] = {}
        for query in data["queries"]:
            hits = kb.search(query["query"], {**run.options, "top_k": _DEPTH})
            ranked[query["id"]] = list(dict.fromkeys(doc_of[h.chunk.doc_id] for h in hits))
        results[run.name] = {k: round(v, 4) for k, v in evaluate_at(ranked, qrels, KS).items()}
    for kb in kbs.values():
        kb.drop()
    return results


def run_langrag_benchmark(
    paths: Sequence[Path],
    *,
    settings: Settings,
    embedders: Sequence[str] = ("minilm", "e5"),
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure every configuration on each set with each embedder; a JSON-ready report."""
    plan, skipped = runs(model_configured(settings))
    report: dict[str, Any] = {"ks": list(KS), "skipped": skipped, "sets": {}}
    for path in paths:
        data = load_set(path)
        name = path.stem  # the reference figures are keyed by file name, not the set's id
        entry: dict[str, Any] = {
            "documents": len(data["documents"]),
            "queries": len(data["queries"]),
            "reference": LANGRAG_REFERENCE.get(name, {}),
            "embedders": {},
        }
        for embedder in embedders:
            with tempfile.TemporaryDirectory(prefix="citewise-langrag-") as tmp:
                local = Settings(
                    home=Path(tmp),
                    embedder=embedder,
                    llm_base_url=settings.llm_base_url,
                    llm_api_key=settings.llm_api_key,
                    llm_model=settings.llm_model,
                    llm_gguf=settings.llm_gguf,
                )
                started = time.perf_counter()
                entry["embedders"][embedder] = run_set(data, local, embedder, plan, progress)
                entry["embedders"][embedder]["_seconds"] = round(time.perf_counter() - started, 1)
        report["sets"][name] = entry
    return report


def format_report(report: dict[str, Any]) -> str:
    """A Markdown table per set: hit/all-relevant/nDCG at 3 and the rest at 5."""
    columns = ["hit@1", "hit@3", "all_relevant@3", "ndcg@3", "precision@3", "recall@5",
               "mrr@5", "ndcg@5"]  # fmt: skip
    lines: list[str] = []
    for name, entry in report["sets"].items():
        lines += [f"### {name} ({entry['documents']} documents, {entry['queries']} queries)", ""]
        lines.append("| embedder | configuration | " + " | ".join(columns) + " |")
        lines.append("|---|---|" + "---:|" * len(columns))
        for kind, figures in entry["reference"].items():
            cells = [f"{figures[c]:.2f}" if c in figures else "" for c in columns]
            lines.append(f"| LangRAG | {kind} (reference) | " + " | ".join(cells) + " |")
        for embedder, results in entry["embedders"].items():
            for config, figures in results.items():
                if config.startswith("_") or "failures" in figures:
                    continue
                cells = [f"{figures[c]:.2f}" for c in columns]
                lines.append(f"| {embedder} | {config} | " + " | ".join(cells) + " |")
        lines.append("")
    if report["skipped"]:
        lines += ["Skipped: " + "; ".join(report["skipped"]), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.langrag PATH ...``: LangRAG sets, configurations or its folder."""
    from benchmarks.langrag_configs import format_config_report, is_config, run_config

    cli = common.parser("benchmarks.langrag", __doc__)
    cli.add_argument(
        "paths", nargs="+", metavar="PATH",
        help="LangRAG configs/<config>.json (run as written on the set it was written for), "
        "datasets/<set>.json (citewise's own plan), or the langrag-benchmarks folder",
    )  # fmt: skip
    cli.add_argument(
        "--dataset", help="the set to run one configuration file on (default: its own)"
    )
    cli.add_argument(
        "--embedder", action="append", default=[], help="repeatable (default: minilm and e5)"
    )
    common.add_report_options(cli, markdown_beside=False)
    args = cli.parse_args(argv)

    def run() -> int:
        settings = Settings.from_env()
        # A folder is LangRAG's benchmark folder: every configuration in its configs/.
        paths: list[Path] = []
        for given in map(Path, args.paths):
            paths += sorted((given / "configs").glob("*.json")) if given.is_dir() else [given]
        configs = [path for path in paths if is_config(path)]
        datasets = [path for path in paths if path not in configs]
        if args.dataset and len(configs) != 1:
            raise ConfigurationError("--dataset pairs a set with one configuration file")
        embedders = args.embedder or ["minilm", "e5"]
        report: dict[str, Any] = {}
        if datasets:
            report = run_langrag_benchmark(
                datasets, settings=settings, embedders=embedders, progress=common.log
            )
        report["configs"] = [
            run_config(path, settings=settings, embedders=embedders, progress=common.log,
                       dataset=Path(args.dataset) if args.dataset else None)
            for path in configs
        ]  # fmt: skip
        common.save_report(args.output, report)
        if args.json:
            print(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            if datasets:
                print(format_report(report))
            print("\n".join(format_config_report(config) for config in report["configs"]))
        return 0

    return common.guarded("benchmarks.langrag", run)


if __name__ == "__main__":
    sys.exit(main())
