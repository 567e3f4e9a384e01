"""`citewise index` (a docs folder or a published release) and `citewise sections`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citewise.cli.common import (
    DEFAULT_KB,
    Subcommands,
    open_kb,
    print_json,
    progress_bar,
)
from citewise.config import Settings
from citewise.errors import ConfigurationError
from citewise.kb import Library, sources

# The names of ``sources`` are looked up when a command uses them (or this parser is built):
# their modules (docs navigation: YAML, TOML, the API-reference parsers; release versions)
# were a tenth of a cold `citewise search`'s imports.

if TYPE_CHECKING:
    from citewise.kb.sources import ReleaseSpec

__all__ = ["add_index_commands"]

# How a requested release was resolved, as the summary line tells it ("exact" says nothing).
_RESOLVED_HOW = {
    "normalized": "published as {version}",
    "alias": "alias",
    "branch": "the docs of its release line, {version}",
    "development": "development version, latest docs",
    "fallback": "not published by itself, the {version} docs",
}


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    if args.url:
        return _index_url(args, settings)
    if args.release or args.package or args.requirements or args.environment:
        return _index_release(args, settings)
    if args.folder is None:
        raise ConfigurationError(
            "give a FOLDER to index, --release OWNER/REPO@VERSION or --package NAME"
        )
    kb = open_kb(args.kb or DEFAULT_KB, settings.with_overrides(embedder=args.embedder))
    with progress_bar(sys.stderr.isatty() and not args.quiet, "Indexing") as progress:
        report = kb.index_folder(
            Path(args.folder),
            site_url=args.site_url,
            version=args.version,
            progress=progress,
            scope_rule=sources.ScopeRule(separate=tuple(args.separate_scope)),
            rebuild=args.rebuild,
            replace=args.replace,
            page_form=args.page_form,
            api_dependencies=_api_dependencies(args),
        )
    if args.json:
        print_json(asdict(report))
    else:
        print(report.summary())
        _print_skipped(report.skipped)
    return 0


def _index_url(args: argparse.Namespace, settings: Settings) -> int:
    """``--url``: crawl a published site (the crawl's bounds from CITEWISE_CRAWL_* and flags)."""
    from citewise.kb.sources import CrawlLimits

    sources = (("FOLDER", args.folder), ("--release", args.release),
               ("--package", args.package), ("--requirements", args.requirements))  # fmt: skip
    given = [flag for flag, value in sources if value]
    if given:
        raise ConfigurationError(f"--url crawls a site: give it without {', '.join(given)}")
    if args.site_url or args.version is not None:
        raise ConfigurationError(
            "--url is the site: its pages are cited at the URLs they are fetched from "
            "(no --site-url or --version)"
        )
    limits = CrawlLimits.from_env().with_overrides(
        max_pages=args.max_pages, max_depth=args.max_depth, max_seconds=args.max_seconds,
        max_page_bytes=args.max_page_bytes, concurrency=args.concurrency,
        exclude=tuple(args.exclude) or None,
    )  # fmt: skip
    kb = open_kb(args.kb or DEFAULT_KB, settings.with_overrides(embedder=args.embedder))
    with progress_bar(sys.stderr.isatty() and not args.quiet, "Indexing") as progress:
        report = kb.index_url(
            args.url, limits=limits, progress=progress, rebuild=args.rebuild, replace=args.replace
        )
    if args.json:
        print_json(asdict(report))
    else:
        print(report.summary())
        _print_skipped(report.skipped)
    return 0


def _print_skipped(skipped: dict[str, str]) -> None:
    for path, reason in skipped.items():
        print(f"skipped {path}: {reason}")


def _index_release(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here so the other commands never load httpx or the release machinery.
    from citewise.kb.sources import release_spec

    given = [flag for flag, value in (("--release", args.release), ("--package", args.package),
             ("--requirements", args.requirements), ("--environment", args.environment))
             if value]  # fmt: skip
    if args.folder is not None:
        raise ConfigurationError(f"{given[0]} takes no FOLDER: it names the docs to fetch")
    if len(given) > 1:
        raise ConfigurationError(f"give one of {', '.join(given)}, not several")
    # Only what the user gave: the rest is found, or remembered by the knowledge base.
    options: dict[str, Any] = dict(
        site_url=args.site_url or None,
        versions_url=args.versions_url,
        archive_url=args.archive_url,
        fallback_latest=args.fallback == "latest",
        scope_rule=sources.ScopeRule(separate=tuple(args.separate_scope)),
        docs_version=args.version,
    )
    if args.page_form is not None:
        options["page_form"] = args.page_form
    if args.api_dependencies:
        options["api_dependencies"] = _api_dependencies(args)
    if args.docs_dir is not None:
        options["docs_dir"] = args.docs_dir
    if args.site_layout is not None:
        options["layout"] = args.site_layout
    if args.requirements:
        return _index_requirements(args, settings, options)
    if args.environment:
        from citewise.cli.environment import index_environment

        return index_environment(args, settings, options, _index_spec)
    spec = release_spec(args.release, package=args.package, python=args.python, **options)
    if args.package:
        print(f"{args.package} {spec.version} installed: {spec.name}", file=sys.stderr)
    _index_spec(args, settings, spec, args.kb)
    return 0


def _index_spec(
    args: argparse.Namespace, settings: Settings, spec: ReleaseSpec, kb: str | None,
    meta: dict[str, str] | None = None,
) -> None:  # fmt: skip
    from citewise.kb.releases import index_release

    with progress_bar(sys.stderr.isatty() and not args.quiet, "Indexing") as progress:
        result = index_release(
            spec, Library.shared(settings), kb_name=kb, rebuild=args.rebuild,
            refresh=args.refresh, progress=progress, embedder=args.embedder, meta=meta,
        )  # fmt: skip
    fetched = result.release
    if args.json:
        print_json({**asdict(result.report), **fetched.meta(), "site": fetched.published.base,
                    "links_skipped": fetched.skipped_links})  # fmt: skip
        return
    print(result.report.summary())
    _print_skipped(result.report.skipped)
    for path, reason in fetched.skipped_links.items():
        print(f"skipped {path} (archive link): {reason}")
    resolved = fetched.resolved
    how = _RESOLVED_HOW.get(resolved.how, "").format(version=resolved.version)
    print(
        f"release {fetched.version}" + (f" (for {resolved.requested}: {how})" if how else "")
        + f", cited at {fetched.published.base}"
    )  # fmt: skip


def _index_requirements(
    args: argparse.Namespace, settings: Settings, options: dict[str, Any]
) -> int:
    """One knowledge base per pinned package (``name==version``), its links from the
    installed distribution; a line that is not a pin and a package that fails are named
    (with why) and the others go on. Each knowledge base keeps the site it was given."""
    from citewise.errors import CitewiseError
    from citewise.kb.sources import (
        installed_package,
        marker_environment,
        package_release_spec,
        read_requirements,
    )

    if args.kb or args.site_url or args.version is not None:
        raise ConfigurationError(
            "--requirements names each knowledge base and site itself: give --kb, --site-url "
            "or --version to one package with --package NAME (a knowledge base remembers them)"
        )
    # Markers are evaluated for the Python the packages are installed in.
    environment = marker_environment(args.python) if args.python else None
    requirements = read_requirements(Path(args.requirements), environment)
    for where, reason in requirements.skipped:
        print(f"{where}: skipped: {reason}", file=sys.stderr)
    failed: dict[str, str] = {}
    for name, version in requirements.pins:
        try:
            installed = replace(installed_package(name, args.python), version=version)
            spec = package_release_spec(installed, **options)
            print(f"{name}=={version}: {spec.name}", file=sys.stderr)
            _index_spec(args, settings, spec, None)
        except CitewiseError as error:
            failed[name] = str(error)
            print(f"{name}=={version}: not indexed: {error}", file=sys.stderr)
    return 1 if failed else 0


def cmd_sections(args: argparse.Namespace, settings: Settings) -> int:
    folder = Path(args.folder)
    api = (
        sources.folder_api_reference(folder, dependencies=_api_dependencies(args))
        if args.api
        else None
    )
    from citewise.kb import parse_folder

    sections = parse_folder(
        folder, site_url=args.site_url, version=args.version, api=api, page_form=args.page_form,
        parse_settings=settings.parsing(),
    )  # fmt: skip
    for section in sections:
        if args.json:
            record = {
                "url": section.url,
                "page": section.page,
                "heading_path": list(section.heading_path),
                "level": section.level,
                "anchor": section.anchor,
                "doc_id": section.doc_id,
                "scope": section.scope,
            }
            print(json.dumps(record, ensure_ascii=False))
        else:
            print(f"{section.url}  {' › '.join(section.heading_path)}")
    return 0


def _add_page_form(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--page-form", choices=["dirhtml", "html"], default=None,
        help="page URLs as a/b/ (dirhtml) or a/b.html (html), when the site's config "
        "cannot tell (default: read from mkdocs.yml, .readthedocs.yaml, build scripts)",
    )  # fmt: skip


def _add_api_dependencies(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--api-dependencies", action="append", default=[], metavar="DIR",
        help="a site-packages holding the project's installed dependencies: API entries its "
        "classes inherit from them are rendered as the site shows them (--package: the "
        "package's own site-packages)",
    )  # fmt: skip


def _api_dependencies(args: argparse.Namespace) -> tuple[Path, ...]:
    found = tuple(Path(p).expanduser() for p in args.api_dependencies)
    for folder in found:
        if not folder.is_dir():
            raise ConfigurationError(f"--api-dependencies {folder}: not a folder")
    return found


def add_index_commands(commands: Subcommands) -> None:
    """``citewise index`` and ``citewise sections``."""
    index = commands.add_parser("index", help="index (or re-index) a folder of docs or a release")
    index.add_argument("folder", nargs="?", help="docs folder (not with --release)")
    index.add_argument("--kb", default=None, help="knowledge base (default: docs, REPO-RELEASE)")
    index.add_argument("--site-url", default="", help="published site URL, e.g. https://x.io/")
    index.add_argument(
        "--version", default=None,
        help="docs version segment in page URLs ('' for none; with --package/--release it "
        "skips finding it from the site)",
    )  # fmt: skip
    index.add_argument("--release", help="index a published release: OWNER/REPO@VERSION")
    index.add_argument(
        "--url", help="crawl a published docs site: the pages under this URL's folder",
    )  # fmt: skip
    crawl = index.add_argument_group("crawl bounds (--url; default: CITEWISE_CRAWL_* or built-in)")
    crawl.add_argument("--max-pages", type=int, default=None, help="pages requested (2000)")
    crawl.add_argument("--max-depth", type=int, default=None, help="links followed deep (20)")
    crawl.add_argument("--max-seconds", type=float, default=None, help="wall time (1800)")
    crawl.add_argument(
        "--max-page-bytes", type=int, default=None, help="decoded bytes of one page (8 MiB)"
    )
    crawl.add_argument("--concurrency", type=int, default=None, help="requests at once (4)")
    crawl.add_argument(
        "--exclude", action="append", default=[], metavar="PATTERN",
        help="leave out pages whose path under the start URL matches (glob: '_modules/*')",
    )  # fmt: skip
    index.add_argument(
        "--package", metavar="NAME",
        help="index the docs of the installed version of this package (its Project-URLs)",
    )  # fmt: skip
    index.add_argument(
        "--environment", action="store_true",
        help="one knowledge base per installed distribution with docs (a GitHub repository "
        "link), per exact version; again after an upgrade indexes only what changed",
    )  # fmt: skip
    index.add_argument(
        "--lazy", action="store_true",
        help="with --environment: fetch nothing now; each package is indexed by the first "
        "question about it",
    )  # fmt: skip
    index.add_argument(
        "--python", metavar="PATH",
        help="with --package, --requirements or --environment: the Python they are in",
    )  # fmt: skip
    index.add_argument(
        "--requirements", metavar="FILE",
        help="one knowledge base per pinned package (name==version) of a requirements file, "
        "or per locked package of uv.lock, poetry.lock or pylock.toml",
    )  # fmt: skip
    index.add_argument("--versions-url", help="versions.json URL ({site_url}versions.json)")
    index.add_argument("--archive-url", help="archive URL template: {owner} {repo} {version}")
    index.add_argument("--fallback", choices=["latest"], help="unpublished: use the latest docs")
    index.add_argument("--docs-dir", default=None, help="docs folder inside the archive (docs)")
    index.add_argument(
        "--site-layout", choices=sources.LAYOUTS, default=None,
        help="how the docs site publishes versions (default auto: found from the site)",
    )  # fmt: skip
    index.add_argument("--refresh", action="store_true", help="fetch versions.json again")
    index.add_argument(
        "--separate-scope", action="append", default=[], metavar="SECTION",
        help="keep this nav section (scope name or title) out of the main 'library' scope",
    )  # fmt: skip
    index.add_argument("--embedder", default=None, help="embedder for a new knowledge base")
    index.add_argument(
        "--rebuild", action="store_true",
        help="re-embed everything (e.g. with another --embedder); the old index stays until "
        "the new one is ready",
    )  # fmt: skip
    index.add_argument(
        "--replace", action="store_true",
        help="index a different folder into an existing knowledge base, replacing its documents",
    )  # fmt: skip
    _add_page_form(index)
    _add_api_dependencies(index)
    index.add_argument("--json", action="store_true")
    index.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    index.set_defaults(run=cmd_index)

    sections = commands.add_parser("sections", help="list the sections a folder parses into")
    sections.add_argument("folder")
    sections.add_argument("--site-url", default="")
    sections.add_argument("--version", default=None)
    _add_page_form(sections)
    _add_api_dependencies(sections)
    sections.add_argument("--json", action="store_true", help="one JSON object per line")
    sections.add_argument(
        "--api", action="store_true",
        help="also the API reference (mkdocstrings, Sphinx autodoc), as `index` adds it",
    )  # fmt: skip
    sections.set_defaults(run=cmd_sections)
