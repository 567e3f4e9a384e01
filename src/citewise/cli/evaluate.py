"""`citewise eval`: run question cases against a knowledge base and report how it did."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from citewise.cli.common import DEFAULT_KB, Subcommands, open_kb
from citewise.config import Settings
from citewise.errors import ConfigurationError
from citewise.kb import DEFAULT_WORKFLOW, WORKFLOWS, make_chat_model

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["add_eval_command"]

DEFAULT_MODES = "vector,keyword,hybrid"


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here: the harness loads the evaluation machinery only this command needs.
    from citewise.evaluation.harness import (
        run_assistant_eval,
        run_replay_eval,
        run_retrieval_eval,
    )

    if args.endpoint and not args.model:
        raise ConfigurationError("--endpoint needs --model: the model name the endpoint serves")
    settings = settings.with_overrides(llm_base_url=args.endpoint, llm_model=args.model)
    kb = open_kb(args.kb, settings)
    out_dir = Path(args.output) if args.output else None
    if args.replay:
        modes = args.modes.split(",") if args.modes else None
        outcome = run_replay_eval(Path(args.cases), Path(args.replay), kb, modes=modes,
                                  out_dir=out_dir)  # fmt: skip
    elif args.retrieval_only:
        model = kb.model
        outcome = run_retrieval_eval(
            Path(args.cases), kb, modes=(args.modes or DEFAULT_MODES).split(","),
            runs=args.runs, out_dir=out_dir, model=model,
        )  # fmt: skip
    else:
        model = kb.model
        if model is None:
            raise ConfigurationError(
                "a full evaluation runs the assistant and needs a chat model "
                "(CITEWISE_LLM_MODEL, or --endpoint URL --model NAME); use --retrieval-only "
                "to evaluate search alone, or --replay QUERIES.json"
            )
        outcome = run_assistant_eval(
            Path(args.cases), kb, model, judge=_judge(args.judge_model, settings, model),
            workflow=args.workflow, runs=args.runs, out_dir=out_dir,
            fail_on_judge=args.fail_on_judge, endpoint=settings.llm_base_url,
        )  # fmt: skip
        _export_to_langfuse(args, outcome.results)
    print(outcome.text)
    for path in outcome.written:
        print(f"wrote {path}")
    return 1 if len(outcome.failed_cases) > args.max_failures else 0


def _export_to_langfuse(args: argparse.Namespace, results: dict[str, object]) -> None:
    """With ``LANGFUSE_*`` set (and not ``--no-langfuse``): the cases as a dataset, this
    evaluation as a dataset run with its scores."""
    from citewise.evaluation.experiments import export_run, langfuse_configured

    if args.no_langfuse or not langfuse_configured():
        return
    where = export_run(results, Path(args.cases), run_name=args.run_name)
    print(f"langfuse: dataset {where.dataset!r}, run {where.run!r} ({where.items} items)")


def _judge(name: str | None, settings: Settings, model: BaseChatModel) -> BaseChatModel | None:
    """The judge ``--judge-model`` names, in ``CITEWISE_LLM_MODEL``'s vocabulary (``local``
    or an endpoint model at ``CITEWISE_LLM_BASE_URL``); the answer model itself when it is
    the same one (a local model is not loaded twice)."""
    if not name:
        return None
    if name == (settings.llm_model or "local"):
        return model
    judge = make_chat_model(settings.with_overrides(llm_model=name))
    if judge is None:  # pragma: no cover - a model name always configures a model
        raise ConfigurationError(f"--judge-model {name!r} names no chat model")
    return judge


def add_eval_command(commands: Subcommands) -> None:
    """``citewise eval CASES``."""
    evaluate = commands.add_parser("eval", help="evaluate question cases against a kb")
    evaluate.add_argument("cases", help="cases JSON (messages, settings, parts, reply)")
    evaluate.add_argument("--kb", default=DEFAULT_KB, help="knowledge base name")
    evaluate.add_argument(
        "--retrieval-only", action="store_true", help="no chat model: search the last message"
    )
    evaluate.add_argument(
        "--modes",
        help=f"search modes (default {DEFAULT_MODES}; --replay: every one available: "
        "hybrid, vector, keyword, hybrid+rerank with a cross-encoder)",
    )
    evaluate.add_argument(
        "--replay",
        metavar="QUERIES.json",
        help="no model: search the planner queries an earlier run wrote (its queries.json) "
        "with every search type and report per-part recall per mode",
    )
    evaluate.add_argument(
        "--endpoint",
        metavar="URL",
        help="an OpenAI-compatible endpoint (…/v1) to evaluate, instead of CITEWISE_LLM_*",
    )
    evaluate.add_argument("--model", help="the chat model name (with --endpoint: served there)")
    evaluate.add_argument(
        "--no-langfuse", action="store_true", help="do not export to Langfuse even when set"
    )
    evaluate.add_argument("--run-name", help="the Langfuse dataset run's name (default: dated)")
    evaluate.add_argument("--runs", type=int, default=1, help="repeat each case N times")
    evaluate.add_argument("--output", help="folder for results.json, report.md, recall.png")
    evaluate.add_argument(
        "--max-failures",
        type=int,
        default=3,
        help="cases failing a deterministic check (searched, part found, shape, grounding) "
        "allowed before exit 1; the judge's verdicts count only with --fail-on-judge",
    )
    evaluate.add_argument("--workflow", default=DEFAULT_WORKFLOW, choices=WORKFLOWS)
    evaluate.add_argument(
        "--judge-model",
        help="judge each answer's grounding and reply shape with this model: 'local' or an "
        "endpoint model name (CITEWISE_LLM_BASE_URL); reported, not failed",
    )
    evaluate.add_argument(
        "--fail-on-judge",
        action="store_true",
        help="a judge's failing verdict (shape or grounded) fails the case too",
    )
    evaluate.set_defaults(run=cmd_eval)
