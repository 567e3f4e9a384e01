"""`citewise search` and `citewise ask`: a knowledge base's hits and cited answers."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from citewise.cli.common import (
    DEFAULT_KB,
    Subcommands,
    add_search_flags,
    open_kb,
    print_json,
    search_overrides,
)
from citewise.config import Settings
from citewise.errors import ConfigurationError, ModelError
from citewise.kb import (
    DEFAULT_WORKFLOW,
    WORKFLOWS,
    Done,
    KnowledgeBase,
    Resolved,
    Status,
    TextDelta,
)
from citewise.models import Answer, Citation
from citewise.options import MAX_AGENT_REWRITES

__all__ = ["NO_MODEL_HINT", "add_query_commands", "read_history"]

NO_MODEL_HINT = (
    "citewise: no chat model is configured, so this answer quotes the docs. For written "
    "answers set CITEWISE_LLM_MODEL (with CITEWISE_LLM_BASE_URL and CITEWISE_LLM_API_KEY for "
    "an OpenAI-compatible endpoint), or CITEWISE_LLM_MODEL=local for a local GGUF model."
)


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    hits = open_kb(args.kb, settings).search(args.query, search_overrides(args))
    if args.json:
        print_json([hit.as_json() for hit in hits])
        return 0
    if not hits:
        print("No matching sections.")
    for rank, hit in enumerate(hits, start=1):
        rankers = "+".join(hit.rankers)
        print(f"{rank:>2}. {hit.score:.4f} [{rankers}] {' › '.join(hit.chunk.heading_path)}")
        print(f"    {hit.url}")
    return 0


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


def stream_answer(
    kb: KnowledgeBase,
    messages: list[dict[str, str]],
    options: Resolved,
    *,
    workflow: str,
    show_text: bool,
) -> Answer:
    """Run the answer workflow: status lines on stderr, the answer streamed to stdout
    (when ``show_text``)."""
    answer: Answer | None = None
    for event in kb.stream(messages, options, workflow=workflow):
        if isinstance(event, Status):
            print(f"· {event.text}", file=sys.stderr, flush=True)
        elif isinstance(event, TextDelta) and show_text:
            print(event.text, end="", flush=True)
        elif isinstance(event, Done):
            answer = event.answer
    if answer is None:  # pragma: no cover - the stream always ends with Done or raises
        raise ModelError("the answer workflow ended without an answer")
    if show_text:
        print()
    return answer


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    # The history is read first, so a malformed file fails before any search or model call.
    messages = [*read_history(args.history), {"role": "user", "content": args.question}]
    kb = open_kb(args.kb, settings)
    options = kb.resolved(search_overrides(args))  # resolved once: the answer takes it whole
    streamed = kb.model is not None
    if streamed:
        answer = stream_answer(kb, messages, options, workflow=args.model, show_text=not args.json)
    else:
        print(NO_MODEL_HINT, file=sys.stderr)
        answer = kb.ask(messages, options, workflow=args.model)
    if args.json:
        print_json(
            {
                "text": answer.text,
                "kind": answer.kind,
                "queries": list(answer.queries),
                "annotations": [annotation(citation) for citation in answer.citations],
                "hits": [hit.as_json() for hit in answer.hits],
                "verification": answer.verification and answer.verification.as_json(),
            }
        )
        return 0
    if not streamed:
        print(answer.text)
    if answer.verification is not None and not answer.verification.ok:
        print(f"citewise: {check_summary(answer)}", file=sys.stderr)
    sources = list(dict.fromkeys((c.url, c.title) for c in answer.citations))
    if sources:
        print("\nSources:")
        for number, (url, title) in enumerate(sources, start=1):
            print(f"  [{number}] {title}\n      {url}")
    return 0


def annotation(citation: Citation) -> dict[str, object]:
    """A citation as ``--json`` prints it: the ``url_citation`` fields, and ``attributed``
    when citewise added it (the model wrote no link there)."""
    fields = asdict(citation)
    if not citation.attributed:
        del fields["attributed"]
    return fields


def check_summary(answer: Answer) -> str:
    """One line on what the grounding check found (stderr, beside the answer)."""
    verification = answer.verification
    assert verification is not None
    found = []
    if verification.unsupported:
        found.append(f"not in the sections: {', '.join(verification.unsupported)}")
    if verification.outside_links:
        found.append(f"links outside the sections: {', '.join(verification.outside_links)}")
    weak = sum(not c.supported for c in verification.citations)
    if weak:
        found.append(f"{weak} citation(s) weakly supported")
    return "the grounding check found " + "; ".join(found)


def add_query_commands(commands: Subcommands) -> None:
    """``citewise search`` and ``citewise ask``."""
    search = commands.add_parser("search", help="search the docs")
    search.add_argument("query")
    search.add_argument("--kb", default=DEFAULT_KB, help="knowledge base name")
    search.add_argument("--json", action="store_true")
    add_search_flags(search)
    search.set_defaults(run=cmd_search)

    ask = commands.add_parser("ask", help="answer a question with cited sections")
    ask.add_argument("question")
    ask.add_argument("--kb", default=DEFAULT_KB, help="knowledge base name")
    ask.add_argument(
        "--model",
        choices=WORKFLOWS,
        default=DEFAULT_WORKFLOW,
        help="answer workflow (with no chat model, the built-ins quote the docs)",
    )
    ask.add_argument(
        "--history", metavar="FILE", help='earlier turns: JSON list of {"role", "content"}'
    )
    ask.add_argument("--json", action="store_true")
    add_search_flags(ask, answers=True)
    budget = ask.add_argument_group("citewise-agentic budget (this question only)")
    budget.add_argument(
        "--agent-rewrites", type=int, default=None, metavar="N",
        help=f"rewrites of a search graded irrelevant (0..{MAX_AGENT_REWRITES}, default 1)",
    )  # fmt: skip
    budget.add_argument(
        "--no-agent-grading", dest="agent_grading", action="store_const", const=False,
        default=None, help="answer from the first search without grading it",
    )  # fmt: skip
    ask.set_defaults(run=cmd_ask)
