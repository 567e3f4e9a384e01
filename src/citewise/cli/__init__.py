"""The command line: `citewise index | sections | search | ask | kb | doc | serve | mcp | eval |
bench`, one module per command group, each calling the service layer (:mod:`citewise.kb`)."""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
from collections.abc import Sequence

from citewise.cli.bench import add_bench_commands
from citewise.cli.common import Command
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citewise", description="Answer questions about a documentation set, with citations."
    )
    parser.add_argument(
        "--version", action="version", version=version_text(),
        help="print the version, the store schema and the default embedder",
    )  # fmt: skip
    commands = parser.add_subparsers(dest="command", required=True)
    add_index_commands(commands)
    add_query_commands(commands)
    add_eval_command(commands)
    add_bench_commands(commands)
    add_serve_commands(commands)
    add_kb_commands(commands)
    add_doc_commands(commands)
    add_diagnostics_command(commands)
    add_store_commands(commands)
    add_host_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # At exit the collector's last passes walked every object the imports made (pydantic's
    # schemas, typing's caches): a tenth of a cold `citewise search`'s CPU, to free memory
    # the process is about to hand back anyway (benchmarks/cold-cli.md). Frozen, they are
    # skipped; whatever drops to no reference is still freed and finalised as before.
    atexit.unregister(gc.freeze)  # once, however often main runs in one process (tests)
    atexit.register(gc.freeze)
    args = build_parser().parse_args(argv)
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
