"""The distributions installed in a Python environment (this one or ``--python PATH``), for
``citewise index --environment``: one knowledge base per distribution whose docs can be built."""

from __future__ import annotations

from importlib import metadata

from citewise.errors import SourceError
from citewise.sources.package import (
    InstalledPackage,
    _run,
    distribution_data,
    package_from_data,
)

__all__ = ["installed_packages"]

# Run by ``--python PATH``: every distribution that interpreter sees, as JSON.
_LIST_PROBE = """
import json
from importlib import metadata
seen, found = set(), []
for dist in metadata.distributions():
    meta = dist.metadata
    name = meta["Name"]
    if not name or name.lower() in seen:
        continue
    seen.add(name.lower())
    found.append({"name": name, "version": dist.version,
                  "urls": meta.get_all("Project-URL") or [],
                  "home_page": meta.get("Home-page") or "",
                  "location": str(dist.locate_file(""))})
print(json.dumps(found))
"""


def installed_packages(python: str | None = None) -> list[InstalledPackage]:
    """Every distribution installed in this Python or in the interpreter ``python``, by
    name (the first of a name on the path wins, as imports do).

    Raises:
        SourceError: that interpreter cannot be run.
    """
    if python:
        found = _run(python, _LIST_PROBE)
        if not isinstance(found, list):
            raise SourceError(f"--python {python} printed no distributions")
        packages = [package_from_data(data, python) for data in found]
    else:
        packages, seen = [], set()
        for dist in metadata.distributions():
            meta = dist.metadata
            name = meta["Name"]
            if not name or name.lower() in seen:
                continue
            seen.add(name.lower())
            packages.append(package_from_data(distribution_data(dist), ""))
    return sorted(packages, key=lambda package: package.name.lower())
