"""`python -m benchmarks.pages`: built docs sites parsed page by page, as a crawler hands them over.

Every ``.html`` file of a built site is parsed with ``parse_html`` (doc id: its path in the
site, so ``a/index.html`` is the page ``a/``; site URL: the site's base URL), and two things
are measured per site: the share of section URLs whose anchor is an id of that very page
(it must be 100%), and, against the site's truth (benchmarks.sites.truth), the share of the
site's headings and API objects some section cites (the bar is 98%).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.sites.truth import Citation, compare_citations, load_truth
from citewise.errors import ConfigurationError
from citewise.evaluation.report import git_commit
from citewise.models import Section

__all__ = ["BuiltSite", "bench_built_site", "format_report", "load_parser", "main", "root_sites",
           "run_pages_benchmark"]  # fmt: skip

Parse = Callable[..., list[Section]]
# Built output that is no page of the docs: sources shown as text, search and index pages.
_NOT_PAGES = frozenset({"_sources", "_modules", "_static", "_images", "assets", "search",
                        "genindex", "py-modindex"})  # fmt: skip


class BuiltSite:
    """One built site: its HTML folder, its truth file, base URL and generator."""

    def __init__(self, name: str, built: Path, truth: Path, base_url: str, generator: str):
        self.name = name
        self.built = built
        self.truth = truth
        self.base_url = base_url
        self.generator = generator


def load_parser(path: Path | None) -> Parse:
    """``parse_html`` of this checkout, or of another version of html.py (a baseline)."""
    if path is None:
        from citewise.parsing.html import parse_html

        return parse_html
    spec = importlib.util.spec_from_file_location("citewise_baseline_html", path)
    if spec is None or spec.loader is None:
        raise ConfigurationError(f"{path}: cannot load a parser from it")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    parse: Parse = module.parse_html
    return parse


def root_sites(root: Path, only: Iterable[str] | None = None) -> list[BuiltSite]:
    """The built sites of a conformance root: ``NAME-VERSION/site.json`` with the build in
    ``.build/NAME/site`` (``site-dirhtml`` when the truth is of that page form); a build
    with a ``truth-html.json`` beside it is also measured as its html form."""
    wanted = set(only or ())
    sites: list[BuiltSite] = []
    for info in sorted(root.glob("*/site.json")):
        spec = json.loads(info.read_text(encoding="utf-8"))
        name = str(spec["name"])
        if wanted and name not in wanted and info.parent.name not in wanted:
            continue
        build = root / ".build" / name
        truth = info.parent / "_site-truth.json"
        dirhtml = build / "site-dirhtml"
        built = (
            dirhtml if dirhtml.is_dir() and spec.get("page_form") == "dirhtml" else build / "site"
        )
        if not built.is_dir() or not truth.is_file():
            continue
        generator, base = str(spec["generator"]), str(spec["base_url"])
        sites.append(BuiltSite(name, built, truth, base, generator))
        if built != build / "site" and (build / "truth-html.json").is_file():
            sites.append(BuiltSite(f"{name} (html)", build / "site", build / "truth-html.json",
                                   base, generator))  # fmt: skip
    return sites


def _pages(built: Path) -> list[Path]:
    return sorted(
        path
        for path in built.rglob("*.html")
        if not _NOT_PAGES & set(path.relative_to(built).parts[:-1])
        and path.relative_to(built).as_posix()
        not in ("search.html", "genindex.html", "py-modindex.html")  # fmt: skip
    )


def bench_built_site(site: BuiltSite, parse: Parse) -> dict[str, Any]:
    """Parse every page of ``site`` with ``parse`` and measure it (see the module docstring)."""
    from bs4 import BeautifulSoup

    from citewise.parsing.html import page_ids

    truth = load_truth(site.truth, site.generator)
    started = time.perf_counter()
    citations: list[Citation] = []
    sections = anchored = on_page = 0
    off_page: list[str] = []
    errors: list[str] = []
    pages = _pages(site.built)
    for path in pages:
        doc_id = path.relative_to(site.built).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            found = parse(text, doc_id=doc_id, site_url=site.base_url, version=None)
        except Exception as error:  # noqa: BLE001  (a page that fails is counted, not fatal)
            errors.append(f"{doc_id}: {error!r}")
            continue
        ids = page_ids(BeautifulSoup(text, "html.parser"))
        for section in found:
            sections += 1
            citations.append(Citation(section.url, section.title, section.doc_id))
            anchor = section.url.partition("#")[2]
            if not anchor:
                continue
            anchored += 1
            if anchor in ids:
                on_page += 1
            elif len(off_page) < 10:
                off_page.append(section.url)
    seconds = time.perf_counter() - started
    comparison = compare_citations(citations, truth, site.base_url)
    summary = comparison["summary"]
    return {
        "site": site.name,
        "built": str(site.built),
        "pages": len(pages),
        "sections": sections,
        "anchored": anchored,
        "anchors_on_page": on_page,
        "anchors_on_page_pct": round(100.0 * on_page / anchored, 2) if anchored else 100.0,
        "off_page_examples": off_page,
        "headings_indexed_pct": round(100.0 - summary["missed_sections_pct"], 2),
        "api_indexed_pct": round(100.0 - summary["missed_api_pct"], 2)
        if summary["site_api_objects"]
        else 100.0,
        "summary": summary,
        "missed_examples": comparison["missed"][:10],
        "broken_examples": comparison["broken"][:10],
        "errors": errors,
        "seconds": round(seconds, 2),
    }


def run_pages_benchmark(
    sites: Iterable[BuiltSite],
    parse: Parse,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every site measured with ``parse``."""
    results = []
    for site in sites:
        result = bench_built_site(site, parse)
        results.append(result)
        if progress is not None:
            progress(f"{site.name}: {_one_line(result)}")
    return {"benchmark": "pages", "git_commit": git_commit(), "sites": results}


def _one_line(r: Mapping[str, Any]) -> str:
    return (
        f"{r['pages']} pages, {r['sections']} sections, anchors on page "
        f"{r['anchors_on_page']}/{r['anchored']} ({r['anchors_on_page_pct']}%), headings "
        f"{r['headings_indexed_pct']}%, API {r['api_indexed_pct']}%, {r['seconds']} s"
    )


def format_report(report: Mapping[str, Any]) -> str:
    """One Markdown row per site."""
    lines = [
        f"command: `{report.get('command', 'run_pages_benchmark')}` "
        f"(commit `{report.get('git_commit') or 'unknown'}`)",
        "",
        "| site | pages | sections | anchors on their page | headings indexed "
        "| API objects indexed | errors | seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in report["sites"]:
        s = r["summary"]
        lines.append(
            f"| {r['site']} | {r['pages']} | {r['sections']} "
            f"| {r['anchors_on_page']}/{r['anchored']} ({r['anchors_on_page_pct']}%) "
            f"| {s['site_sections'] - s['missed_sections']}/{s['site_sections']} "
            f"({r['headings_indexed_pct']}%) "
            f"| {s['site_api_objects'] - s['missed_api']}/{s['site_api_objects']} "
            f"({r['api_indexed_pct']}%) | {len(r['errors'])} | {r['seconds']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.pages --root ROOT`` (or ``--built`` one site)."""
    cli = common.parser("benchmarks.pages", __doc__)
    cli.add_argument(
        "--root", help="conformance root (NAME-VERSION/site.json, builds in .build/NAME/site)"
    )
    cli.add_argument("--only", nargs="+", metavar="NAME", help="these sites only")
    cli.add_argument("--built", help="one built site's HTML folder instead of a root")
    cli.add_argument("--truth", help="with --built: its _site-truth.json")
    cli.add_argument("--base-url", help="with --built: the URL the site is published at")
    cli.add_argument("--generator", default="sphinx", choices=("sphinx", "mkdocs"),
                     help="with --built: how to read its truth")  # fmt: skip
    cli.add_argument(
        "--parser", metavar="HTML_PY",
        help="measure another version of parsing/html.py (a baseline) instead of this one",
    )  # fmt: skip
    common.add_report_options(cli)
    args = cli.parse_args(argv)
    if args.built:
        if not (args.truth and args.base_url):
            cli.error("--built needs --truth and --base-url")
        sites = [BuiltSite(Path(args.built).name, Path(args.built), Path(args.truth),
                           args.base_url, args.generator)]  # fmt: skip
    elif args.root:
        sites = root_sites(Path(args.root), args.only or None)
    else:
        cli.error("give --root, or --built with --truth and --base-url")

    def run() -> int:
        parse = load_parser(Path(args.parser) if args.parser else None)
        report = run_pages_benchmark(sites, parse, progress=common.log)
        report["command"] = common.command("benchmarks.pages", argv)
        common.save_report(args.output, report, format_report)
        common.print_report(args, report, format_report)
        return 0

    return common.guarded("benchmarks.pages", run)


if __name__ == "__main__":
    sys.exit(main())
