"""`citewise serve` (the OpenAI-compatible API and chat page) and `citewise mcp` (stdio tools)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from citewise.cli.common import DEFAULT_KB, Subcommands
from citewise.config import Settings

if TYPE_CHECKING:
    from citewise.server import ServerOptions

__all__ = ["add_serve_commands", "server_options"]


def server_options(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> ServerOptions:
    """The server's options: the environment's (``CITEWISE_*``), overridden by the flags.

    The release flags mean what they mean for ``citewise index --release``, and apply to a
    release named by ``--release`` or by ``CITEWISE_RELEASE``.
    """
    from citewise.server import ServerOptions
    from citewise.server.runtime import release_options
    from citewise.sources.nav import ScopeRule
    from citewise.sources.release import ReleaseSpec

    env = os.environ if environ is None else environ
    options = ServerOptions.from_env(env)
    if args.kb:
        options = replace(options, kb=args.kb)
    spec = ReleaseSpec.parse(args.release, **release_options(env)) if args.release else None
    spec = spec or options.release
    flags: dict[str, Any] = {
        "site_url": args.site_url, "versions_url": args.versions_url,
        "archive_url": args.archive_url, "fallback_latest": args.fallback == "latest" or None,
        "scope_rule": ScopeRule(separate=tuple(args.separate_scope)) if args.separate_scope
        else None,
    }  # fmt: skip
    if spec is not None:
        spec = replace(spec, **{name: value for name, value in flags.items() if value is not None})
        options = replace(options, release=spec)
    return options


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here: the other commands need neither uvicorn nor the server's routes.
    import uvicorn

    from citewise.server import create_app
    from citewise.server.logs import configure_logging

    configure_logging()  # one line per request (JSON off a terminal), replacing uvicorn's

    app = create_app(settings, server_options(args))
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
    release = serve.add_argument_group("the release (as for citewise index --release)")
    release.add_argument("--site-url", default=None, help="published site URL of the release")
    release.add_argument("--versions-url", help="versions.json URL ({site_url}versions.json)")
    release.add_argument("--archive-url", help="archive URL template: {owner} {repo} {version}")
    release.add_argument("--fallback", choices=["latest"], help="unpublished: use the latest docs")
    release.add_argument(
        "--separate-scope", action="append", default=[], metavar="SECTION",
        help="a nav section kept out of the library scope (CITEWISE_RELEASE_SEPARATE_SCOPES)",
    )  # fmt: skip
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    serve.set_defaults(run=cmd_serve)

    mcp = commands.add_parser("mcp", help="serve search_docs / ask_docs to agents over stdio")
    mcp.add_argument("--kb", default=DEFAULT_KB, help="knowledge base name")
    mcp.set_defaults(run=cmd_mcp)
