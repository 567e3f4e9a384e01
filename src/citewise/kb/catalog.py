"""The catalog: one card per knowledge base (package, version, description, scopes, aliases),
what routing, the model cards and the MCP tools tell a library by."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from citewise.options import ALL_SCOPE

if TYPE_CHECKING:
    from citewise.kb.knowledge_base import KnowledgeBase

__all__ = ["Card", "card_of", "normalized"]

_VERSION_RE = re.compile(r"(?:^|[/\-_v])v?(\d+\.\d+(?:\.\d+)*(?:[a-z]+\d*)?)(?=$|[/\-_])")
# Path segments of a docs site URL that are a language or a version alias, not a name.
_GENERIC_SEGMENTS = frozenset({"en", "latest", "stable", "docs", "doc", "main", "master", "dev"})
# Hosts whose first label is the project (``requests.readthedocs.io``) or whose first path
# segment is (``owner.github.io/repo``).
_PROJECT_HOSTS = ("readthedocs.io", "readthedocs.org", "rtfd.io")
_PAGES_HOSTS = ("github.io", "gitlab.io")
_OPENING_CHARS = 240


def normalized(name: str) -> str:
    """A name compared in any spelling: lower case, ``-``, ``_``, ``.`` and spaces as one."""
    return re.sub(r"[\s\-_.]+", "-", name.strip().lower()).strip("-")


@dataclass(frozen=True)
class Card:
    """What a knowledge base is, for a router or an agent choosing among libraries."""

    name: str
    package: str
    version: str = ""
    description: str = ""
    scopes: tuple[str, ...] = (ALL_SCOPE,)
    aliases: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        """``package version`` (``requests 2.34.2``): how citations and statuses name it."""
        return f"{self.package} {self.version}".strip()

    def as_json(self) -> dict[str, object]:
        return {
            "kb": self.name,
            "package": self.package,
            "version": self.version,
            "description": self.description,
            "scopes": list(self.scopes),
            "aliases": list(self.aliases),
        }


def _site_name(site_url: str) -> str:
    """The project a docs site URL names (``requests.readthedocs.io`` → ``requests``)."""
    parts = urlsplit(site_url)
    host = (parts.hostname or "").lower()
    segments = [s for s in parts.path.split("/") if s and s.lower() not in _GENERIC_SEGMENTS]
    segments = [s for s in segments if not _VERSION_RE.fullmatch("/" + s)]
    if host.endswith(_PROJECT_HOSTS):
        return host.split(".")[0]
    if host.endswith(_PAGES_HOSTS) and segments:
        return segments[0]
    return segments[-1] if segments else ""


def _version_in(text: str) -> str:
    found = _VERSION_RE.search(text)
    return found.group(1) if found else ""


def _opening(kb: KnowledgeBase) -> str:
    """The first page's opening words: a description for a knowledge base given none."""
    from citewise.kb.reading import document_chunks

    documents = sorted(kb.documents(), key=lambda doc: (doc.page.count("/"), doc.page))
    for document in documents[:3]:
        for chunk in document_chunks(kb.store, document.doc_id, document.title):
            heads = {" > ".join(chunk.heading_path), " › ".join(chunk.heading_path), chunk.title}
            lines = chunk.text.splitlines()
            text = " ".join(x for x in lines if not x.startswith("#") and x.strip() not in heads)
            text = " ".join(text.split())
            if len(text) > 40:
                return text[:_OPENING_CHARS].rsplit(" ", 1)[0] + "…"
    return ""


def card_of(kb: KnowledgeBase) -> Card:
    """The card of ``kb``, from its meta: a release's repository and version, else the
    site URL's project name and version, else its own name (``requests-2.34.2`` →
    ``requests`` 2.34.2)."""
    meta = kb.meta()
    site = meta.get("site_url", "")
    version = meta.get("release") or meta.get("version") or ""
    version = version or _version_in(site) or _version_in(kb.name)
    base = kb.name
    if version and base.endswith(version):
        base = base[: -len(version)].rstrip("-_ v")
    repo = meta.get("release_repo", "").rpartition("/")[2]
    package = meta.get("package") or repo or _site_name(site) or base
    aliases: list[str] = []
    for alias in (kb.name, base, package):
        if alias and normalized(alias) not in {normalized(a) for a in aliases}:
            aliases.append(alias)
    description = kb.config.description or meta.get("description", "") or _opening(kb)
    return Card(kb.name, package, version, description, kb.scopes, tuple(aliases))
