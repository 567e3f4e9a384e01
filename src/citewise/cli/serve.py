"""`citewise serve` (the OpenAI-compatible API and chat page) and `citewise mcp` (stdio tools)."""

from __future__ import annotations

import argparse
from dataclasses import replace

from citewise.cli.common import DEFAULT_KB, Subcommands
from citewise.config import Settings

__all__ = ["add_serve_commands"]


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here: the other commands need neither uvicorn nor the server's routes.
    import uvicorn

    from citewise.server import ServerOptions, create_app
    from citewise.server.logs import configure_logging
    from citewise.sources.release import ReleaseSpec

    configure_logging()  # one line per request (JSON off a terminal), replacing uvicorn's

    options = ServerOptions.from_env()
    if args.kb:
        options = replace(options, kb=args.kb)
    if args.release:
        options = replace(options, release=ReleaseSpec.parse(args.release))
    app = create_app(settings, options)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False)
    return 0


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here: the MCP SDK is an optional extra (``citewise[mcp]``).
    from citewise.mcp_server import serve

    serve(args.kb, settings)
    return 0


def add_serve_commands(commands: Subcommands) -> None:
    """``citewise serve`` and ``citewise mcp``."""
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
