"""`citewise serve` (the OpenAI-compatible API and chat page) and `citewise mcp` (stdio tools)."""

from __future__ import annotations

import argparse
import ipaddress
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from citewise.cli.common import DEFAULT_KB, Subcommands
from citewise.config import Settings, environment
from citewise.errors import ConfigurationError, KnowledgeBaseError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from citewise.server import ServerOptions
    from citewise.server.runtime import Runtime

log = logging.getLogger("citewise.serve")

API_KEYS_ENV = "CITEWISE_API_KEYS"
ADMIN_KEYS_ENV = "CITEWISE_ADMIN_KEYS"
INSECURE_ENV = "CITEWISE_INSECURE_NO_AUTH"

__all__ = ["add_serve_commands", "server_options", "serving_app"]


def server_options(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> ServerOptions:
    """The server's options: the environment's (``CITEWISE_*``), overridden by the flags.

    The release flags mean what they mean for ``citewise index --release``, and apply to a
    release named by ``--release`` or by ``CITEWISE_RELEASE``.
    """
    from citewise.kb.sources import ScopeRule, release_spec
    from citewise.server import ServerOptions
    from citewise.server.runtime import release_options

    env = environment() if environ is None else environ
    options = ServerOptions.from_env(env)
    if args.kb:
        options = replace(options, kb=args.kb)
    if getattr(args, "insecure_no_auth", False):
        options = replace(options, insecure_no_auth=True)
    spec = release_spec(args.release, **release_options(env)) if args.release else None
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


def is_loopback(host: str) -> bool:
    """True when ``host`` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any address


def check_bind(host: str, options: ServerOptions) -> None:
    """Refuse to serve an open API beyond this machine, unless told ``--insecure-no-auth``.

    Raises:
        ConfigurationError: ``host`` is not loopback, no API key is set and the operator
            did not opt out.
    """
    if is_loopback(host) or options.api_keys:
        return
    if not options.insecure_no_auth:
        raise ConfigurationError(
            f"refusing to serve on {host} without API keys: anyone who can reach it could "
            f"ask and upload; set {API_KEYS_ENV}=KEY[,KEY…], or pass --insecure-no-auth "
            f"({INSECURE_ENV}=1) on a network you trust"
        )
    closed = (
        "" if options.admin_keys else f"; the admin API stays closed until {ADMIN_KEYS_ENV} is set"
    )
    log.warning(
        "INSECURE: serving on %s with no API keys (--insecure-no-auth): anyone who can reach "
        "this address can ask questions%s",
        host,
        closed,
    )


def check_default_kb(runtime: Runtime) -> None:
    """Refuse an unknown ``--kb`` now, not at every question; say what is served.

    Raises:
        KnowledgeBaseError: the configured knowledge base does not exist. Several and
            none the default: every one is served, each question routed to its libraries.
    """
    from citewise.server.runtime import default_kb, no_default_message

    options = runtime.options
    if options.release is not None:
        log.info("serving the release %s (indexed on first use)", options.release)
        return
    names = runtime.library.names()
    known = ", ".join(names) or "none yet"
    if options.kb is not None:
        if options.kb not in names:
            raise KnowledgeBaseError(
                f"unknown knowledge base {options.kb!r} for --kb (CITEWISE_KB) (known: {known})"
            )
        log.info("serving knowledge base %r (knowledge bases: %s)", options.kb, known)
        return
    chosen = default_kb(names)
    if chosen is not None:
        log.info("serving knowledge base %r, the default (knowledge bases: %s)", chosen, known)
    elif names:
        log.info("serving every knowledge base (%s): each question goes to the ones it is "
                 "about, or a request names them (kb)", known)  # fmt: skip
    else:
        log.warning("serving no knowledge base: %s", no_default_message(names))


def serving_app(args: argparse.Namespace, settings: Settings) -> FastAPI:
    """The app ``citewise serve`` runs, once its bind address and knowledge base pass.

    Raises:
        ConfigurationError / KnowledgeBaseError: see :func:`check_bind`, :func:`check_default_kb`.
    """
    from citewise.server import create_app

    options = server_options(args)
    check_bind(args.host, options)
    app = create_app(settings, options)
    check_default_kb(app.state.runtime)
    return app


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here: the other commands need neither uvicorn nor the server's routes.
    import uvicorn

    from citewise.server.logs import configure_logging, uvicorn_log_config
    from citewise.server.receipt import uvicorn_options

    configure_logging()  # one line per request (JSON off a terminal), replacing uvicorn's
    app = serving_app(args, settings)
    # Request heads have a deadline, idle connections a keep-alive past the clients' own,
    # and connections a limit (citewise.server.receipt).
    uvicorn.run(
        app, host=args.host, port=args.port, log_level=args.log_level, access_log=False,
        log_config=uvicorn_log_config(), **uvicorn_options(),
    )  # fmt: skip
    return 0


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here: the MCP SDK is an optional extra (``citewise[mcp]``).
    if args.all:
        from citewise.mcp_libraries import serve_all

        if args.kb is not None:
            raise ConfigurationError("give --kb NAME or --all, not both")
        serve_all(settings)
        return 0
    from citewise.mcp_server import serve

    serve(args.kb or DEFAULT_KB, settings)
    return 0


def add_serve_commands(commands: Subcommands) -> None:
    """``citewise serve`` and ``citewise mcp``."""
    serve = commands.add_parser("serve", help="serve the OpenAI-compatible API and chat page")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--kb", default=None,
        help="default knowledge base (CITEWISE_KB; default: the only one, or docs)",
    )  # fmt: skip
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
    serve.add_argument(
        "--insecure-no-auth", action="store_true",
        help="serve beyond loopback with no API keys (CITEWISE_INSECURE_NO_AUTH=1); the admin "
        "API stays closed unless CITEWISE_ADMIN_KEYS is set",
    )  # fmt: skip
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    serve.set_defaults(run=cmd_serve)

    mcp = commands.add_parser("mcp", help="serve search_docs / ask_docs to agents over stdio")
    mcp.add_argument("--kb", default=None, help=f"knowledge base name (default: {DEFAULT_KB})")
    mcp.add_argument(
        "--all", action="store_true",
        help="every knowledge base: resolve_library, list_libraries, search_docs with a token "
        "budget, get_section, ask_docs",
    )  # fmt: skip
    mcp.set_defaults(run=cmd_mcp)
