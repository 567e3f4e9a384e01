"""Libraries to index on first use (``citewise index --environment --lazy``): each installed
package's release, recorded without fetching anything, built by the first question routed
to it (:mod:`citewise.kb.multi`) and then an ordinary knowledge base."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citewise.errors import KnowledgeBaseError

if TYPE_CHECKING:
    from citewise.kb.ingest import Progress
    from citewise.kb.knowledge_base import KnowledgeBase
    from citewise.kb.library import Library
    from citewise.sources.release import ReleaseSpec

__all__ = ["PendingLibrary", "build", "pending", "record"]

FILE = "pending-libraries.json"
_LOCK = threading.Lock()


@dataclass(frozen=True)
class PendingLibrary:
    """A release to index when first asked about: its knowledge base name, the package it
    documents, and the release (owner, repo, version and the site choices given)."""

    kb: str
    package: str
    version: str
    owner: str
    repo: str
    choices: dict[str, Any]

    def spec(self) -> ReleaseSpec:
        from citewise.sources.release import ReleaseSpec

        choices = dict(self.choices)
        if "api_dependencies" in choices:
            choices["api_dependencies"] = tuple(Path(p) for p in choices["api_dependencies"])
        return ReleaseSpec(self.owner, self.repo, self.version, **choices)


def _path(library: Library) -> Path:
    return library.settings.home.expanduser() / FILE


def pending(library: Library) -> dict[str, PendingLibrary]:
    """The libraries waiting to be indexed, by knowledge base name (none built yet)."""
    path = _path(library)
    if not path.is_file():
        return {}
    names = {f.name for f in fields(PendingLibrary)}
    found = {}
    for entry in json.loads(path.read_text(encoding="utf-8")):
        item = PendingLibrary(**{k: v for k, v in entry.items() if k in names})
        if item.kb not in library.names():
            found[item.kb] = item
    return found


def _write(library: Library, items: dict[str, PendingLibrary]) -> None:
    path = _path(library)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps([asdict(item) for item in items.values()], indent=1, sort_keys=True)
    path.write_text(text + "\n", encoding="utf-8")


def record(library: Library, kb: str, package: str, spec: ReleaseSpec) -> None:
    """Remember ``spec`` as knowledge base ``kb`` of ``package``, to index on first use (the
    site choices that are plain values are kept; a scope rule is not)."""
    choices = {
        f.name: getattr(spec, f.name)
        for f in fields(spec)
        if f.name not in ("owner", "repo", "version", "scope_rule")
        and isinstance(getattr(spec, f.name), str | bool)
    }
    if spec.api_dependencies:
        choices["api_dependencies"] = [str(p) for p in spec.api_dependencies]
    with _LOCK:
        items = pending(library)
        items[kb] = PendingLibrary(kb, package, spec.version, spec.owner, spec.repo, choices)
        _write(library, items)


def build(
    library: Library, kb: str, progress: Progress | None = None, *, vectors_later: bool = True
) -> KnowledgeBase:
    """Fetch and index the pending library ``kb`` (once, however many ask at the same time).

    With ``vectors_later`` (and a store that allows it: SQLite) only its text is written
    before this returns, so the question that asked is answered by keyword search in
    seconds; its vectors are computed by a background thread (:mod:`citewise.kb.vector_fill`)
    and searches are hybrid once it is done. Other stores embed first, as before.

    Raises:
        KnowledgeBaseError: ``kb`` is not pending.
        SourceError: its release could not be fetched.
    """
    from citewise.kb.releases import index_release

    with _LOCK:
        if kb in library.names():
            return library.open(kb)
        item = pending(library).get(kb)
        if item is None:
            raise KnowledgeBaseError(f"{kb!r} is not a library waiting to be indexed")
        result = index_release(
            item.spec(), library, kb_name=kb, progress=progress, meta={"package": item.package},
            vectors_later=vectors_later,
        )  # fmt: skip
        items = pending(library)
        items.pop(kb, None)
        _write(library, items)
    built = library.open(kb)
    if result.report.vectors_missing:
        from citewise.kb.vector_fill import start

        start(built)
    return built
