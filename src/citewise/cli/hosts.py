"""`citewise chainlit` and `citewise lgos`: a knowledge base inside the hosts people run
(the Chainlit chat app, langgraph-openai-serve's OpenAI routes)."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys

from citewise.cli.common import Subcommands, open_kb
from citewise.config import Settings, child_environment
from citewise.errors import MissingExtraError
from citewise.kb import DEFAULT_WORKFLOW, WORKFLOWS

__all__ = ["add_host_commands"]


def _require(module: str, package: str, extra: str, purpose: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(package, extra, purpose)


def cmd_chainlit(args: argparse.Namespace, settings: Settings) -> int:
    _require("chainlit", "chainlit", "chainlit", "citewise chainlit")
    open_kb(args.kb, settings).require()  # a typo fails here, not in the browser
    spec = importlib.util.find_spec("citewise.integrations.chainlit_app")
    assert spec is not None and spec.origin is not None
    env = child_environment(CITEWISE_CHAINLIT_KB=args.kb, CITEWISE_CHAINLIT_WORKFLOW=args.workflow)
    command = [sys.executable, "-m", "chainlit", "run", spec.origin, "--host", args.host]
    command += ["--port", str(args.port), *([] if args.browser else ["--headless"])]
    return subprocess.call(command, env=env)


def cmd_lgos(args: argparse.Namespace, settings: Settings) -> int:
    _require("langgraph_openai_serve", "langgraph-openai-serve", "lgos", "citewise lgos")
    import uvicorn

    from citewise.integrations import lgos

    uvicorn.run(lgos.create_app(open_kb(args.kb, settings)), host=args.host, port=args.port)
    return 0


def add_host_commands(commands: Subcommands) -> None:
    """``citewise chainlit`` and ``citewise lgos``."""
    chat = commands.add_parser(
        "chainlit",
        help="a Chainlit chat over a knowledge base (needs citewise[chainlit])",
        description="Statuses show as steps, citations as elements linking to the sections.",
    )
    chat.add_argument("--kb", required=True, help="the knowledge base to answer from")
    chat.add_argument("--workflow", choices=WORKFLOWS, default=DEFAULT_WORKFLOW)
    chat.add_argument("--host", default="127.0.0.1")
    chat.add_argument("--port", type=int, default=8000)
    chat.add_argument("--browser", action="store_true", help="open a browser tab")
    chat.set_defaults(run=cmd_chainlit)
    serve = commands.add_parser(
        "lgos",
        help="serve a knowledge base with langgraph-openai-serve (needs citewise[lgos])",
        description="Models citewise-rag and citewise-agentic on /v1/chat/completions and "
        "/v1/responses, with LGOS's client settings (docs scope, BM25).",
    )
    serve.add_argument("--kb", required=True, help="the knowledge base to answer from")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(run=cmd_lgos)
