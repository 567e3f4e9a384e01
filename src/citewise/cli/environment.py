"""``citewise index --environment``: one knowledge base per installed distribution whose docs
citewise can build (a GitHub repository among its links), per exact version."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from citewise.config import Settings
from citewise.errors import CitewiseError, ConfigurationError
from citewise.kb import Library

__all__ = ["index_environment"]


def _indexed(library: Library, name: str, version: str) -> bool:
    """True when knowledge base ``name`` holds the release ``version`` already."""
    if name not in library.names():
        return False
    meta = library.open(name).meta()
    return version in (meta.get("release"), meta.get("requested_version"))


def index_environment(
    args: argparse.Namespace,
    settings: Settings,
    options: dict[str, Any],
    index_spec: Callable[..., None],
) -> int:
    """Index each installed distribution with a repository link at its installed version:
    one already indexed at that version is left alone (nothing is fetched), an upgraded one
    gets a knowledge base of its new version. The others are named, with why. ``--lazy``:
    each is only recorded, and indexed by the first question about it (``citewise serve``,
    ``citewise mcp --all``). ``index_spec``: how ``citewise index`` builds one release."""
    from citewise.kb.sources import installed_packages, package_release_spec, release_kb_name

    if args.kb or args.site_url or args.version is not None:
        raise ConfigurationError(
            "--environment names each knowledge base and site itself: give --kb, --site-url "
            "or --version to one package with --package NAME"
        )
    library = Library.shared(settings)
    failed, skipped, current = 0, [], 0
    for installed in installed_packages(args.python):
        where = f"{installed.name} {installed.version}"
        try:
            spec = package_release_spec(installed, **dict(options))
        except ConfigurationError:
            skipped.append(installed.name)  # no repository link: no docs to build
            continue
        name = release_kb_name(spec.repo, installed.version)
        if _indexed(library, name, installed.version):
            current += 1
            print(f"{where}: up to date ({name})", file=sys.stderr)
            continue
        if args.lazy:
            from citewise.kb.pending import record

            record(library, name, installed.name, spec)
            print(f"{where}: {spec.name}, indexed on first use ({name})", file=sys.stderr)
            continue
        print(f"{where}: {spec.name}", file=sys.stderr)
        try:
            index_spec(args, settings, spec, None, meta={"package": installed.name})
        except CitewiseError as error:
            failed += 1
            print(f"{where}: not indexed: {error}", file=sys.stderr)
    if skipped:
        print(f"skipped (no repository link): {', '.join(skipped)}", file=sys.stderr)
    print(f"{current} up to date, {failed} failed, {len(skipped)} without docs", file=sys.stderr)
    return 1 if failed else 0
