"""What every command group shares: the search-option flags, JSON output, progress bars."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

from citewise.config import Settings
from citewise.errors import ConfigurationError
from citewise.kb import KnowledgeBase
from citewise.kb.metadata_filter import parse_metadata_flags

if TYPE_CHECKING:
    from citewise.kb import Progress
from citewise.options import (
    CONTEXT_SCOPES,
    QUERY_REWRITES,
    RERANKERS,
    SEARCH_TYPES,
    VERIFY_MODES,
    OptionsError,
    parse_options,
)

__all__ = [
    "DEFAULT_KB",
    "Command",
    "Subcommands",
    "add_search_flags",
    "open_kb",
    "print_json",
    "progress_bar",
    "search_overrides",
    "warn",
]

DEFAULT_KB = "docs"

# A command's handler: the parsed arguments and the environment's settings → exit code.
Command = Callable[[argparse.Namespace, Settings], int]
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

# Flag destinations that are search options, in the order SearchOptions lists them.
_SEARCH_FIELDS = (
    "top_k",
    "search_type",
    "query_rewrite",
    "rerank",
    "rerank_candidates",
    "candidates_per_ranker",
    "vector_weight",
    "context_window",
    "context_scope",
    "collapse_sections",
    "scope",
    "doc_ids",
    "page_prefix",
    "doc_metadata",
    "verify",  # answers only (``ask``, a knowledge base's defaults): the grounding check
    "agent_rewrites",
    "agent_grading",
    "chat_model",
    "reranker_dir",
)


def warn(message: str) -> None:
    print(f"citewise: warning: {message}", file=sys.stderr)


def print_json(payload: Any) -> None:
    print(json.dumps(payload, indent=2, ensure_ascii=False))


def open_kb(name: str, settings: Settings) -> KnowledgeBase:
    """The knowledge base ``name`` in the process-wide library of ``settings``.

    The knowledge base carries this run's ``settings`` (not the library's first ones), so
    the chat model and a new index's embedder follow the environment of this command.
    """
    return KnowledgeBase(name, settings=settings)


@contextmanager
def progress_bar(enabled: bool, label: str) -> Iterator[Progress | None]:
    """A rich progress bar on a terminal; nothing when output is piped."""
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        Task,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.progress import Progress as Bar
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(f"{task.speed:.1f} windows/s" if task.speed else "")

    # Embedding is the slow part: the bar counts embedding windows, with rate and ETA.
    with Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeRemainingColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int, doc_id: str) -> None:
            bar.update(task, completed=done, total=total, description=f"{label} {doc_id}")

        yield update


def add_search_flags(
    sub: argparse.ArgumentParser,
    *,
    title: str = "search options (default: the knowledge base's own)",
    answers: bool = False,
) -> None:
    """Add the search-option flags to ``sub``, each defaulting to None so the knowledge
    base's own defaults apply unless a flag overrides them; with ``answers``, also the
    options of an answer (``--verify``).

    ``--query-rewrite`` and ``--rerank`` take a registered name (a package may add its
    own): the service layer checks it when the options are resolved, naming the known ones.
    """
    group = sub.add_argument_group(title)
    group.add_argument("--top-k", type=int, default=None, metavar="N", help="how many sections")
    group.add_argument("--search-type", choices=SEARCH_TYPES, default=None)
    group.add_argument(
        "--query-rewrite", default=None, metavar="NAME",
        help=f"also search rephrasings: {', '.join(QUERY_REWRITES)} or a registered rewrite",
    )  # fmt: skip
    group.add_argument(
        "--rerank", default=None, metavar="NAME",
        help=f"reorder the candidates: {', '.join(RERANKERS)} or a registered reranker",
    )  # fmt: skip
    group.add_argument(
        "--rerank-candidates", type=int, default=None, metavar="N",
        help="how many fused candidates the reranker sees",
    )  # fmt: skip
    group.add_argument(
        "--candidates-per-ranker", type=int, default=None, metavar="N",
        help="how many candidates each ranker (embeddings, BM25) brings to the fusion "
        "(default 20)",
    )  # fmt: skip
    group.add_argument(
        "--vector-weight", type=float, default=None, metavar="W",
        help="hybrid: the embeddings' share of the fusion, 0-1 (default: equal shares)",
    )  # fmt: skip
    group.add_argument(
        "--context-window", type=int, default=None, metavar="N",
        help="append up to N neighbouring chunks to each hit",
    )  # fmt: skip
    group.add_argument(
        "--context-scope", choices=CONTEXT_SCOPES, default=None,
        help="where --context-window's chunks come from: the hit's section (default) or "
        "its page (adjacent sections too)",
    )  # fmt: skip
    group.add_argument(
        "--collapse-sections", action=argparse.BooleanOptionalAction, default=None,
        help="each section once, at its best chunk (default: on); --no-collapse-sections: "
        "every matching chunk",
    )  # fmt: skip
    group.add_argument("--scope", default=None, help="part of the docs to search (or all)")
    group.add_argument(
        "--doc-id", dest="doc_ids", action="append", default=None, metavar="DOC_ID",
        help="only this document (repeatable)",
    )  # fmt: skip
    group.add_argument("--page-prefix", default=None, help="only pages under this path")
    group.add_argument(
        "--metadata", dest="doc_metadata", action="append", default=None, metavar="KEY=VALUE",
        help="only documents whose metadata has this value (author, subject, description, "
        "created, modified; repeatable)",
    )  # fmt: skip
    if answers:
        group.add_argument(
            "--verify", choices=VERIFY_MODES, default=None,
            help="the answer's grounding check: off, report, warn (a warning in the answer) "
            "or regenerate (written again once, naming what the docs do not hold)",
        )  # fmt: skip
    group.add_argument(
        "--chat-model", default=None, metavar="NAME",
        help="chat model for query rewrites, rerank=llm and qa questions (default: "
        "the knowledge base's, else CITEWISE_LLM_MODEL)",
    )  # fmt: skip
    group.add_argument(
        "--reranker-dir", default=None, metavar="DIR",
        help="cross-encoder for rerank=cross_encoder (default: the knowledge base's, "
        "else CITEWISE_RERANKER_DIR)",
    )  # fmt: skip


def search_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The search options the flags set (flags left out are absent, not None)."""
    overrides = {name: getattr(args, name, None) for name in _SEARCH_FIELDS}
    if overrides["doc_ids"] is not None:
        overrides["doc_ids"] = tuple(overrides["doc_ids"])
    overrides["doc_metadata"] = parse_metadata_flags(overrides["doc_metadata"])
    overrides = {name: value for name, value in overrides.items() if value is not None}
    try:
        parse_options(overrides)
    except OptionsError as error:
        # Name the flag the user typed, not the option's field name.
        where, message = error.problems[0]
        name = str(where[0]) if where else ""
        flag = f"--{name.replace('_', '-')}"
        raise ConfigurationError(f"{flag} {overrides.get(name)!r}: {message}") from None
    return overrides
