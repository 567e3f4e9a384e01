"""`python -m benchmarks.sites`: citewise's citations checked against real sites' built ground
truth.

A conformance root (see benchmarks/sites/) holds one folder per site release: its source tree
as the sdist ships it, ``site.json`` (generator, builder, docs_dir, site_url, site_version,
base_url) and ``_site-truth.json`` (from the site built with its own toolchain).  For each site
citewise parses the docs folder as ``citewise sections --api`` does, and the citations are
compared with the truth both ways (benchmarks.sites.truth); the issue's thresholds are applied.
"""

from __future__ import annotations

import json
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.sites.truth import Citation, compare_citations, load_truth
from citewise.errors import CitewiseError, ConfigurationError
from citewise.evaluation.report import git_commit

__all__ = [
    "THRESHOLDS", "SiteSpec", "format_report", "load_site", "manifest_folders",
    "run_sites_benchmark",
]  # fmt: skip

SITE_FILE = "site.json"
TRUTH_FILE = "_site-truth.json"

# Issue 23's bar, in percent: broken of citewise's sections, missed of the site's.
THRESHOLDS = {"broken_pct": 1.0, "missed_api_pct": 5.0, "missed_sections_pct": 2.0}

# How many broken citations and misses a report keeps per site, for people to look at.
EXAMPLES = 25


@dataclass(frozen=True)
class SiteSpec:
    """What site.json says of one site release."""

    name: str
    version: str
    generator: str
    builder: str
    docs_dir: str
    site_url: str
    site_version: str | None
    base_url: str
    published: str = ""
    notes: str = ""
    # what a user tells citewise of a site whose source does not say it (a Read the Docs
    # project setting): "dirhtml" or "html"; None when the source says it
    page_form: str | None = None


def load_site(folder: Path) -> SiteSpec:
    """A site folder's site.json, checked: a missing key or generator is named."""
    path = folder / SITE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"{path}: cannot read site description ({error})") from error
    required = ("name", "version", "generator", "builder", "docs_dir", "site_url", "base_url")
    missing = [key for key in required if not data.get(key)]
    if missing:
        raise ConfigurationError(f"{path}: missing {', '.join(missing)}")
    if data["generator"] not in ("sphinx", "mkdocs"):
        raise ConfigurationError(f"{path}: generator {data['generator']!r} is not sphinx/mkdocs")
    return SiteSpec(
        name=data["name"], version=str(data["version"]), generator=data["generator"],
        builder=data["builder"], docs_dir=data["docs_dir"], site_url=data["site_url"],
        site_version=data.get("site_version") or None, base_url=data["base_url"],
        published=data.get("published", ""), notes=data.get("notes", ""),
        page_form=data.get("page_form") or None,
    )  # fmt: skip


def citewise_citations(folder: Path, spec: SiteSpec) -> list[Citation]:
    """The sections citewise finds in the site's docs folder, API reference included, as
    ``citewise sections DOCS --site-url U --version V --api [--page-form F]`` lists them."""
    from citewise.kb import parse_folder
    from citewise.sources.nav import folder_api_reference

    docs = folder / spec.docs_dir
    if not docs.is_dir():
        raise ConfigurationError(f"{docs}: docs folder not found")
    api = folder_api_reference(docs, dependencies=build_environment(folder, spec))
    sections = parse_folder(
        docs, site_url=spec.site_url, version=spec.site_version, api=api,
        page_form=spec.page_form,
    )  # fmt: skip
    return [Citation(s.url, s.heading_path[-1] if s.heading_path else s.title, s.doc_id)
            for s in sections]  # fmt: skip


def build_environment(folder: Path, spec: SiteSpec) -> tuple[Path, ...]:
    """The site-packages of the venv the site was built in (``ROOT/.venvs/NAME``, as
    benchmarks/sites/build_sites.py makes it): what a user who has the package installed has
    beside it (``index --package``), so bases from its dependencies resolve as on the site."""
    venv = folder.parent / ".venvs" / spec.name
    return tuple(sorted(venv.glob("lib/python*/site-packages")))


def verdict(summary: Mapping[str, Any]) -> dict[str, bool]:
    """Pass/fail of each threshold; an API bar passes on a site without API objects, the
    broken bar only when citewise cited something (none of nothing is no pass)."""
    passed = {key: float(summary[key]) <= limit for key, limit in THRESHOLDS.items()}
    passed["broken_pct"] = passed["broken_pct"] and summary["citewise_rows"] > 0
    return passed


def bench_site(folder: Path) -> dict[str, Any]:
    """One site's result; a site that cannot be read or parsed is reported with its error."""
    name = folder.name
    try:
        spec = load_site(folder)
        truth_path = folder / TRUTH_FILE
        if not truth_path.is_file():
            raise ConfigurationError(f"{truth_path}: truth not found (build the site first)")
        truth = load_truth(truth_path, spec.generator)
    except CitewiseError as error:
        return {"site": name, "status": "error", "error": str(error)}
    # citewise failing on a real site is a result (nothing cited, everything missed), not a stop
    failure = None
    started = time.perf_counter()
    try:
        citations = citewise_citations(folder, spec)
    except CitewiseError as error:
        citations, failure = [], str(error)
    except Exception as error:  # a crash on a site nobody tried is a finding, not the end
        citations, failure = [], f"{type(error).__name__}: {error}"
    seconds = time.perf_counter() - started
    compared = compare_citations(citations, truth, spec.base_url)
    summary = compared["summary"]
    passed = verdict(summary)
    return {
        "site": name,
        "status": "ok" if failure is None else "citewise_failed",
        "citewise_error": failure,
        "generator": spec.generator,
        "builder": spec.builder,
        "base_url": spec.base_url,
        "parse_seconds": round(seconds, 2),
        "summary": summary,
        "pass": passed,
        "passed": all(passed.values()),
        "broken_examples": compared["broken"][:EXAMPLES],
        "missed_examples": compared["missed"][:EXAMPLES],
        "duplicate_examples": compared["duplicates"][:EXAMPLES],
    }


def manifest_folders(manifest: Path) -> list[str]:
    """The site folders (NAME-VERSION) a conformance manifest (benchmarks/sites/sites.toml)
    lists: the sites a root is expected to hold."""
    try:
        sites = tomllib.loads(manifest.read_text(encoding="utf-8"))["site"]
        return [f"{site['name']}-{site['version']}" for site in sites]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConfigurationError(f"{manifest}: not a sites manifest ({error})") from error


def site_folders(
    root: Path, only: Iterable[str] | None = None, expected: Iterable[str] = ()
) -> list[Path]:
    """The site folders under ``root``: those with site.json and the ``expected`` ones (even
    when missing, to be reported), or the ``only`` ones by name (a folder name, or a site name
    matching NAME-VERSION folders)."""
    if not root.is_dir():
        raise ConfigurationError(f"{root}: conformance root not found")
    found = {p.name for p in root.iterdir() if (p / SITE_FILE).is_file()}
    folders = [root / name for name in sorted(found | set(expected))]
    if not only:
        return folders
    chosen: list[Path] = []
    for name in only:
        matches = [p for p in folders if p.name == name or p.name.rsplit("-", 1)[0] == name]
        chosen += matches or [root / name]
    return chosen


def run_sites_benchmark(
    root: Path,
    only: Iterable[str] | None = None,
    progress: Callable[[str], None] | None = None,
    manifest: Path | None = None,
) -> dict[str, Any]:
    """Every site of the conformance root (and of ``manifest``, when given) compared with
    citewise; the report's ``sites`` keep one result each, in folder order, missing ones with
    status ``error``."""
    expected = manifest_folders(manifest) if manifest is not None else []
    results = []
    for folder in site_folders(root, only, expected):
        if progress is not None:
            progress(f"{folder.name} ...")
        result = bench_site(folder)
        results.append(result)
        if progress is not None:
            progress(f"{folder.name}: {_one_line(result)}")
    ok = [r for r in results if "summary" in r]
    return {
        "benchmark": "sites",
        "root": str(root),
        "git_commit": git_commit(),
        "thresholds": THRESHOLDS,
        "sites_passed": sum(1 for r in ok if r["passed"]),
        "sites_total": len(results),
        "sites": results,
    }


def _one_line(result: Mapping[str, Any]) -> str:
    if "summary" not in result:
        return f"error: {result['error']}"
    s = result["summary"]
    return (f"{s['citewise_rows']} rows, {s['broken']} broken ({s['broken_pct']}%), "
            f"missed {s['missed_sections']} sections ({s['missed_sections_pct']}%), "
            f"{s['missed_api']} API ({s['missed_api_pct']}%)")  # fmt: skip


def _mark(passed: bool) -> str:
    return "pass" if passed else "FAIL"


def format_report(report: Mapping[str, Any]) -> str:
    """The report as Markdown: one row per site with the thresholds' verdicts, then the
    misses by origin and a few broken citations per site."""
    limits = report["thresholds"]
    lines = [
        "# Citations against real sites",
        "",
        f"- conformance root: `{report['root']}`",
        f"- git commit: `{report.get('git_commit') or 'unknown'}`",
        f"- command: `{report.get('command') or 'run_sites_benchmark'}`",
        f"- thresholds: broken <= {limits['broken_pct']}% of citewise's sections, "
        f"prose missed <= {limits['missed_sections_pct']}%, "
        f"API missed <= {limits['missed_api_pct']}% of the site's",
        f"- sites passing all three: {report['sites_passed']} of {report['sites_total']}",
        "- installed dependencies: each site's build venv (`ROOT/.venvs/NAME`), as a user "
        "with the package installed has them (`index --package`): bases from other "
        "distributions resolve there",
        "",
        "| site | kind | rows | broken | dup URLs | prose missed | API missed | verdict |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in report["sites"]:
        if "summary" not in r:
            lines.append(f"| {r['site']} | | | | | | | error: {r['error']} |")
            continue
        s, p = r["summary"], r["pass"]
        lines.append(
            f"| {r['site']} | {r['generator']} {r['builder']} | {s['citewise_rows']} "
            f"| {s['broken']} ({s['broken_pct']}%) {_mark(p['broken_pct'])} "
            f"| {s['duplicate_urls']} "
            f"| {s['missed_sections']}/{s['site_sections']} ({s['missed_sections_pct']}%) "
            f"{_mark(p['missed_sections_pct'])} "
            f"| {s['missed_api']}/{s['site_api_objects']} ({s['missed_api_pct']}%) "
            f"{_mark(p['missed_api_pct'])} | {_mark(r['passed'])} |"
        )
    for r in report["sites"]:
        if "summary" not in r:
            continue
        s = r["summary"]
        lines += ["", f"## {r['site']}", ""]
        if r["citewise_error"]:
            lines.append(f"- citewise failed: {r['citewise_error']}")
        reasons = ", ".join(f"{why}: {n}" for why, n in s["broken_by_reason"].items())
        origins = ", ".join(f"{origin}: {n}" for origin, n in s["missed_by_origin"].items())
        lines.append(f"- broken by reason: {reasons or 'none'}")
        lines.append(f"- missed by origin: {origins or 'none'}")
        for b in r["broken_examples"][:5]:
            lines.append(f"- broken: `{b['url']}` ({b['why']})")
        for m in r["missed_examples"][:5]:
            anchor = f"#{m['ids'][0]}" if m["ids"] else ""
            lines.append(f"- missed: `{m['page']}{anchor}` {m['origin']} {m['title']!r}")
    return "\n".join(lines) + "\n"
