"""The command line: `citewise index | sections | search | ask | kb | doc | serve | mcp | eval |
bench`, one module per command group, each calling the service layer (:mod:`citewise.kb`)."""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
from collections.abc import Callable, Sequence

from citewise.cli.bench import add_bench_commands
from citewise.cli.common import Command, Subcommands
from citewise.cli.diagnostics import add_diagnostics_command, recording
from citewise.cli.evaluate import add_eval_command
from citewise.cli.hosts import add_host_commands
from citewise.cli.index import add_index_commands
from citewise.cli.kb import add_doc_commands, add_kb_commands
from citewise.cli.query import NO_MODEL_HINT, add_query_commands
from citewise.cli.serve import add_serve_commands
from citewise.cli.store import add_store_commands
from citewise.config import Settings
from citewise.errors import CitewiseError
from citewise.kb.about import version_text

__all__ = ["NO_MODEL_HINT", "build_parser", "main"]


# Each group of commands, in --help's order, with the commands it adds.
_GROUPS: tuple[tuple[Callable[[Subcommands], None], tuple[str, ...]], ...] = (
    (add_index_commands, ("index", "sections")),
    (add_query_commands, ("search", "ask")),
    (add_eval_command, ("eval",)),
    (add_bench_commands, ("bench",)),
    (add_serve_commands, ("serve", "mcp")),
    (add_kb_commands, ("kb",)),
    (add_doc_commands, ("doc",)),
    (add_diagnostics_command, ("diagnostics",)),
    (add_store_commands, ("store",)),
    (add_host_commands, ("chainlit", "lgos")),
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``command``, only the group of commands holding it
    (a cold `citewise search` need not build forty subparsers: benchmarks/cold-cli.md)."""
    parser = argparse.ArgumentParser(
        prog="citewise", description="Answer questions about a documentation set, with citations."
    )
    parser.add_argument(
        "--version", action="version", version=version_text(),
        help="print the version, the store schema and the default embedder",
    )  # fmt: skip
    commands = parser.add_subparsers(dest="command", required=True)
    for add, names in _GROUPS:
        if command is None or command in names:
            add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # At exit the collector's last passes walked every object the imports made (pydantic's
    # schemas, typing's caches): a tenth of a cold `citewise search`'s CPU, to free memory
    # the process is about to hand back anyway (benchmarks/cold-cli.md). Frozen, they are
    # skipped; whatever drops to no reference is still freed and finalised as before.
    atexit.unregister(gc.freeze)  # once, however often main runs in one process (tests)
    atexit.register(gc.freeze)
    arguments = sys.argv[1:] if argv is None else list(argv)
    # A known command first: only its group is built; anything else (--help, --version, a
    # typo) gets the whole parser and its usual message.
    command = arguments[0] if arguments else None
    known = any(command in names for _, names in _GROUPS)
    args = build_parser(command if known else None).parse_args(arguments)
    run: Command = args.run
    try:
        settings = Settings.from_env()
        with recording(settings):  # the diagnostics history of this home
            return run(args, settings)
    except CitewiseError as error:
        print(f"citewise: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("citewise: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`citewise search … | head -2`): stop quietly, as Unix tools
        # do, and keep Python from complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
