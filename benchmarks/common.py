"""What every benchmark runner shares: the report file, progress lines, the command line."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable
from typing import Any

# The one report writer, shared with `citewise bench` (JSON, and its Markdown beside it).
from citewise.cli.bench import save_report
from citewise.errors import CitewiseError

__all__ = [
    "add_report_options",
    "command",
    "guarded",
    "log",
    "parser",
    "print_report",
    "save_report",
]


def print_report(
    args: argparse.Namespace, report: dict[str, Any], markdown: Callable[[dict[str, Any]], str]
) -> None:
    """The report on stdout: JSON with ``--json``, else its Markdown."""
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else markdown(report))


def add_report_options(parser: argparse.ArgumentParser, markdown_beside: bool = True) -> None:
    """``--output FILE.json`` (and its ``.md`` beside it) and ``--json``."""
    beside = " (and a .md beside it)" if markdown_beside else ""
    parser.add_argument("--output", help=f"write the JSON report here{beside}")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def log(line: str) -> None:
    """A progress line on stderr."""
    print(line, file=sys.stderr, flush=True)


def command(module: str, argv: list[str] | None) -> str:
    """How this run was started, for the report: ``python -m benchmarks.NAME ARGS``."""
    given = sys.argv[1:] if argv is None else argv
    return shlex.join(["python", "-m", module, *given])


def parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """The runner's argument parser: ``python -m MODULE``, described by its docstring's first
    paragraph."""
    description = (doc or "").split("\n\n")[0].strip()
    return argparse.ArgumentParser(prog=f"python -m {module}", description=description)


def guarded(module: str, body: Callable[[], int]) -> int:
    """Run ``body``; a citewise error is one line on stderr and exit status 1."""
    try:
        return body()
    except CitewiseError as error:
        print(f"{module}: error: {error}", file=sys.stderr)
        return 1
