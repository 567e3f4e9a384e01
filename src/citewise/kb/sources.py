"""The source values a door builds a request from: release specs, scope rules, crawl limits,
docs-site layouts and installed packages.

The doors (CLI, server, MCP, hosts) name these through the service layer, never
``citewise.sources`` itself (the import-linter contract forbids it). Each name is imported
from its source module on first use, so importing this module costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citewise.sources.crawl_limits import CrawlLimits
    from citewise.sources.docsite import LAYOUTS
    from citewise.sources.environment import installed_packages
    from citewise.sources.nav import ScopeRule, folder_api_reference
    from citewise.sources.package import (
        installed_package,
        marker_environment,
        package_release_spec,
        read_requirements,
        release_spec,
    )
    from citewise.sources.release import ReleaseSpec, release_kb_name

__all__ = [
    "LAYOUTS",
    "CrawlLimits",
    "ReleaseSpec",
    "ScopeRule",
    "folder_api_reference",
    "installed_package",
    "installed_packages",
    "marker_environment",
    "package_release_spec",
    "read_requirements",
    "release_kb_name",
    "release_spec",
]

_HOMES = {
    "CrawlLimits": "citewise.sources.crawl_limits",
    "LAYOUTS": "citewise.sources.docsite",
    "ScopeRule": "citewise.sources.nav",
    "folder_api_reference": "citewise.sources.nav",
    "installed_package": "citewise.sources.package",
    "installed_packages": "citewise.sources.environment",
    "marker_environment": "citewise.sources.package",
    "package_release_spec": "citewise.sources.package",
    "read_requirements": "citewise.sources.package",
    "ReleaseSpec": "citewise.sources.release",
    "release_kb_name": "citewise.sources.release",
    "release_spec": "citewise.sources.package",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
