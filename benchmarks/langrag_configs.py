"""LangRAG's own benchmark configurations run as written, beside the figures LangRAG published.

A configuration (``langrag-benchmarks/configs/*.json``) lists experiments: a
``parser_mode``, ``creation_settings`` (index type, chunk sizes, overlap, questions per chunk)
and ``retrieval_settings`` (search type, ``top_k``, query rewrite), scored at the config's
``k_values``. Each experiment becomes a citewise knowledge base of the same shape, searched
with the same options; the few settings citewise cannot honour are named in the experiment's
``notes`` rather than silently changed. A configuration runs on the set it was written for
(:data:`PAIRED_SETS`, found in the ``datasets`` folder beside ``configs``) unless another is
given.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.langrag import document_source, load_set
from citewise.config import Settings
from citewise.errors import SourceError
from citewise.evaluation.metrics import evaluate_at
from citewise.kb import IndexStrategy, KBConfig, Library, model_configured

# The set each configuration was written for (by the configuration's file name).
PAIRED_SETS = {
    "hard_retrieval": "hard_multihop_zh",
    "local_retrieval": "mini_zh",
    "parser_compare": "parser_compare_zh",
}
# The figures LangRAG published, by configuration id and experiment: only its three flat
# chunk experiments on hard_multihop_zh (hit@3, all_relevant@3, nDCG@3) were published.
PUBLISHED: dict[str, dict[str, dict[str, float]]] = {
    "hard_retrieval_v1": {
        "chunk_vector_hard": {"hit@3": 0.80, "all_relevant@3": 0.50, "ndcg@3": 0.60},
        "chunk_hybrid_hard": {"hit@3": 0.80, "all_relevant@3": 0.50, "ndcg@3": 0.60},
        "chunk_full_text_hard": {"hit@3": 0.90, "all_relevant@3": 0.70, "ndcg@3": 0.70},
    }
}
_INDEX_TYPES = {"chunk": "section", "parent_child": "parent_child", "qa": "qa"}
# Settings read below; any other is named in the experiment's notes as not honoured.
_CREATION_READ = {"index_type", "chunk_size", "parent_chunk_size", "child_chunk_size",
                  "overlap", "questions_per_chunk", "qa_llm_model_uuid"}  # fmt: skip
_RETRIEVAL_READ = {"search_type", "top_k", "query_rewrite", "rewrite_llm_model_uuid",
                   "vector_weight"}  # fmt: skip


@dataclass(frozen=True)
class Experiment:
    """One LangRAG experiment as citewise runs it."""

    name: str
    strategy: IndexStrategy
    options: dict[str, Any]
    parser_mode: str
    needs_model: bool
    notes: tuple[str, ...]


def load_config(path: Path) -> dict[str, Any]:
    """A LangRAG benchmark configuration (SourceError if the file is not one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        experiments = data["experiments"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SourceError(f"{path}: not a LangRAG benchmark configuration ({error!r})") from None
    if not isinstance(experiments, list) or not experiments:
        raise SourceError(f"{path}: a LangRAG configuration needs a list of experiments")
    assert isinstance(data, dict)
    return data


def is_config(path: Path) -> bool:
    """True for a configuration file (it has ``experiments``), False for a benchmark set."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "experiments" in data


def paired_set(config_path: Path) -> Path:
    """The set ``config_path`` was written for, in the ``datasets`` folder beside it."""
    name = PAIRED_SETS.get(config_path.stem)
    if name is None:
        raise SourceError(
            f"{config_path.name}: no known set for this configuration (known: "
            f"{', '.join(PAIRED_SETS)}); name one with --dataset"
        )
    return config_path.resolve().parent.parent / "datasets" / f"{name}.json"


def experiment(spec: Mapping[str, Any]) -> Experiment:
    """A LangRAG experiment in citewise's terms (SourceError for an unknown index type,
    ConfigurationError for sizes citewise refuses)."""
    creation: dict[str, Any] = dict(spec.get("creation_settings") or {})
    retrieval: dict[str, Any] = dict(spec.get("retrieval_settings") or {})
    index_type = creation.get("index_type", "chunk")
    if index_type not in _INDEX_TYPES:
        raise SourceError(f"experiment {spec.get('name')!r}: unknown index_type {index_type!r}")
    name = _INDEX_TYPES[index_type]
    sizes: dict[str, Any] = {"overlap": int(creation.get("overlap", 0))}
    if name == "parent_child":
        sizes["parent_chars"] = int(creation.get("parent_chunk_size", 2000))
        sizes["child_chars"] = int(creation.get("child_chunk_size", 400))
    else:
        sizes["parent_chars"] = int(creation.get("chunk_size", 2000))
    if name == "qa":
        sizes["questions"] = int(creation.get("questions_per_chunk", 3))
    notes = [
        f"{key}={value} not honoured (citewise has no such setting)"
        for key, value in {**creation, **retrieval}.items()
        if key not in _CREATION_READ | _RETRIEVAL_READ
    ]
    if name == "parent_child" and sizes["overlap"]:
        notes.append(
            "overlap applies between parents; children are citewise windows of child_chunk_size"
        )
    options = {
        "search_type": retrieval.get("search_type", "hybrid"),
        "top_k": int(retrieval.get("top_k", 5)),
        "query_rewrite": retrieval.get("query_rewrite", "off"),
    }
    if "vector_weight" in retrieval and options["search_type"] == "hybrid":
        options["vector_weight"] = float(retrieval["vector_weight"])
    models = [creation.get("qa_llm_model_uuid"), retrieval.get("rewrite_llm_model_uuid")]
    notes += [f"LangRAG's model {m!r} is the configured chat model here" for m in models if m]
    return Experiment(
        name=str(spec.get("name", "")),
        strategy=IndexStrategy(name, **sizes),
        options=options,
        parser_mode=str(spec.get("parser_mode", "preparsed")),
        needs_model=name == "qa" or options["query_rewrite"] != "off",
        notes=tuple(notes),
    )


def run_config(
    config_path: Path,
    *,
    settings: Settings,
    embedders: Sequence[str],
    dataset: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every experiment of one configuration on its set, with each embedder: a JSON-ready
    report with citewise's figures beside LangRAG's published ones."""
    config = load_config(config_path)
    set_path = dataset or paired_set(config_path)
    data = load_set(set_path)
    ks = tuple(int(k) for k in (config.get("metrics") or {}).get("k_values", (1, 3, 5)))
    published = PUBLISHED.get(str(config.get("id")), {})
    has_model = model_configured(settings)
    report: dict[str, Any] = {
        "config": config.get("id", config_path.stem),
        "file": config_path.name,
        "dataset": set_path.stem,
        "documents": len(data["documents"]),
        "queries": len(data["queries"]),
        "ks": list(ks),
        "experiments": {},
    }
    for spec in config["experiments"]:
        run = experiment(spec)
        entry: dict[str, Any] = {
            "as_run": {
                "strategy": run.strategy.name,
                "parent_chars": run.strategy.parent_chars,
                "child_chars": run.strategy.child_chars,
                "chunk_overlap": run.strategy.overlap,
                "parser": "citewise HTML parser"
                if run.parser_mode in ("internal", "general_parsers")
                else "preparsed sections",  # fmt: skip
                **run.options,
            },
            "notes": list(run.notes),
            "published": published.get(run.name),
            "citewise": {},
        }
        if run.needs_model and not has_model:
            entry["skipped"] = "needs a chat model: set CITEWISE_LLM_MODEL"
        else:
            for embedder in embedders:
                started = time.perf_counter()
                entry["citewise"][embedder] = _measure(run, data, ks, settings, embedder)
                if progress is not None:
                    progress(
                        f"{report['config']} {run.name} {embedder}: "
                        f"{time.perf_counter() - started:.1f}s"
                    )
        report["experiments"][run.name] = entry
    return report


def _measure(
    run: Experiment,
    data: dict[str, Any],
    ks: Sequence[int],
    settings: Settings,
    embedder: str,
) -> dict[str, float]:
    """One experiment with one embedder, in a knowledge base of its own."""
    qrels = {q["id"]: dict.fromkeys(q["relevant_document_ids"], 1) for q in data["queries"]}
    sources = [document_source(_as_parsed(doc, run.parser_mode)) for doc in data["documents"]]
    doc_of = {s.doc_id: doc["id"] for s, doc in zip(sources, data["documents"], strict=True)}
    with tempfile.TemporaryDirectory(prefix="citewise-langrag-") as tmp:
        # A SQLite store of its own, whatever store the settings name.
        library = Library(replace(settings, home=Path(tmp), embedder=embedder, store_url=None))
        kb = library.create("bench", KBConfig(strategy=run.strategy, embedder=embedder))
        try:
            kb.add_documents(sources)
            ranked = {
                query["id"]: list(
                    dict.fromkeys(doc_of[hit.chunk.doc_id] for hit in kb.search(query["query"],
                                                                                run.options))
                )
                for query in data["queries"]
            }  # fmt: skip
        finally:
            library.close()
    return {name: round(value, 4) for name, value in evaluate_at(ranked, qrels, ks).items()}


def _as_parsed(doc: dict[str, Any], parser_mode: str) -> dict[str, Any]:
    """The document as the experiment's parser mode gives it: raw HTML for a parser to
    read (``internal``, ``general_parsers``), else LangRAG's pre-parsed sections."""
    if parser_mode in ("internal", "general_parsers"):
        return doc
    return {key: value for key, value in doc.items() if key != "raw_content"}


def format_config_report(report: Mapping[str, Any]) -> str:
    """A Markdown table of one configuration: LangRAG's published figures, then citewise's."""
    ks = report["ks"]
    columns = [f"{m}@{k}" for k in ks for m in ("hit", "all_relevant", "ndcg")]
    lines = [
        f"### {report['file']} on {report['dataset']} ({report['documents']} documents, "
        f"{report['queries']} queries)",
        "",
        "| experiment | who | " + " | ".join(columns) + " |",
        "|---|---|" + "---:|" * len(columns),
    ]
    notes: list[str] = []
    for name, entry in report["experiments"].items():
        if entry["published"]:
            cells = [f"{entry['published'][c]:.2f}" if c in entry["published"] else ""
                     for c in columns]  # fmt: skip
            lines.append(f"| {name} | LangRAG (published) | " + " | ".join(cells) + " |")
        for embedder, figures in entry["citewise"].items():
            cells = [f"{figures[c]:.2f}" for c in columns]
            lines.append(f"| {name} | citewise {embedder} | " + " | ".join(cells) + " |")
        if "skipped" in entry:
            lines.append(f"| {name} | citewise | skipped: {entry['skipped']} |")
        notes += [f"{name}: {note}" for note in entry["notes"]]
    lines.append("")
    lines += [f"- {note}" for note in notes]
    return "\n".join(lines).rstrip() + "\n"
