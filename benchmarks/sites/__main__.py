"""`python -m benchmarks.sites --root ROOT`: citations against real sites' built ground truth."""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks import common
from benchmarks.sites.conformance import format_report, run_sites_benchmark

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Compare citewise with every site of the root; the report names broken and missed."""
    cli = common.parser("benchmarks.sites", __doc__)
    cli.add_argument(
        "--root", required=True,
        help="conformance root: one folder per site with site.json and _site-truth.json "
        "(benchmarks/sites/build_sites.py makes it)",
    )  # fmt: skip
    cli.add_argument(
        "--manifest", metavar="TOML",
        help="the sites the root should hold (benchmarks/sites/sites.toml): missing ones are "
        "reported",
    )  # fmt: skip
    cli.add_argument(
        "--only", nargs="+", metavar="NAME", help="these sites (folder or site name) only"
    )
    common.add_report_options(cli)
    args = cli.parse_args(argv)

    def run() -> int:
        report = run_sites_benchmark(
            Path(args.root),
            only=args.only or None,
            progress=common.log,
            manifest=Path(args.manifest) if args.manifest else None,
        )
        only = f" --only {' '.join(args.only)}" if args.only else ""
        manifest = f" --manifest {args.manifest}" if args.manifest else ""
        report["command"] = f"python -m benchmarks.sites --root {args.root}{manifest}{only}"
        common.save_report(args.output, report, format_report)
        common.print_report(args, report, format_report)
        return 0

    return common.guarded("benchmarks.sites", run)


if __name__ == "__main__":
    sys.exit(main())
