"""The server commands of the command line: ``serve``, ``mcp`` and ``bench serve``."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from citewise.config import Settings

DEFAULT_KB = "docs"

__all__ = ["add_bench_serve", "add_serve_commands"]


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from citewise.server import ServerOptions, create_app
    from citewise.sources.release import ReleaseSpec

    options = ServerOptions.from_env()
    if args.kb:
        options = replace(options, kb=args.kb)
    if args.release:
        options = replace(options, release=ReleaseSpec.parse(args.release))
    app = create_app(settings, options)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.mcp_server import serve

    serve(args.kb, settings)
    return 0


def cmd_bench_serve(args: argparse.Namespace, settings: Settings) -> int:
    from citewise.server.bench import format_report, run_serve_benchmark

    report = run_serve_benchmark(
        settings, kb=args.kb, concurrency=args.concurrency, rounds=args.rounds
    )
    if args.output:
        output = Path(args.output)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report, indent=2) + "\n")
        output.with_suffix(".md").write_text(format_report(report))
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def add_serve_commands(commands: Any) -> None:
    """``citewise serve`` and ``citewise mcp`` (``commands``: the main subparsers)."""
    serve = commands.add_parser("serve", help="serve the OpenAI-compatible API and chat page")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--kb", default=None, help="default knowledge base (CITEWISE_KB, docs)")
    serve.add_argument("--release", help="serve a release, indexed on first use: OWNER/REPO@VER")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    serve.set_defaults(run=cmd_serve)

    mcp = commands.add_parser("mcp", help="serve search_docs / ask_docs to agents over stdio")
    mcp.add_argument("--kb", default=DEFAULT_KB, help="knowledge base name")
    mcp.set_defaults(run=cmd_mcp)


def add_bench_serve(bench_kinds: Any) -> None:
    """``citewise bench serve`` (``bench_kinds``: the bench subparsers)."""
    bench = bench_kinds.add_parser(
        "serve", help="server overhead under concurrent streams (scripted model)"
    )
    bench.add_argument("--kb", default=DEFAULT_KB, help="knowledge base to answer from")
    bench.add_argument("--concurrency", type=int, default=50)
    bench.add_argument("--rounds", type=int, default=3, help="bursts of concurrent streams")
    bench.add_argument("--output", help="write the JSON report here (and a .md beside it)")
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(run=cmd_bench_serve)
