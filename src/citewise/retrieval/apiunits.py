"""API-reference entries as units (object id, kind, parent) and the objects a query names.

An API entry is recognised from what every chunk already stores, so no schema or parser
change is needed: mkdocstrings and Sphinx autodoc both anchor an object's section at its
dotted path (``griffe.Alias.final_target``) and title it with its name, after a kind word
or called (``class requests.Session``, ``get()``; an index made before short titles has the
signature: ``get(url, params=None, **kwargs)``). A prose heading's
anchor is a slug (``advanced-usage``), never a dotted path headed by its own title.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from citewise.models import ApiUnit, Chunk

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED_RE = re.compile(rf"^{_IDENT}(?:\.{_IDENT})*$")
# A title may start with a kind word (``class Session``, ``property cookies``).
_KIND_WORDS = {"class", "exception", "function", "method", "property", "attribute", "module",
               "async", "classmethod", "staticmethod", "data"}  # fmt: skip
_TITLE_NAME_RE = re.compile(rf"({_IDENT}(?:\.{_IDENT})*)")
# Mentions of objects in a question: dotted paths, snake_case and CamelCase names, and any
# name in backticks or followed by a call's parentheses.
_MENTION_RE = re.compile(
    rf"`(?P<quoted>{_IDENT}(?:\.{_IDENT})*)(?:\(\))?`"
    rf"|(?P<dotted>\b{_IDENT}(?:\.{_IDENT})+)(?:\(\))?"
    rf"|(?P<called>\b{_IDENT})\(\)"
    r"|(?P<snake>\b[A-Za-z0-9]*[a-z0-9]_[A-Za-z0-9_]*[A-Za-z0-9])\b"
    r"|(?P<camel>\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)\b"
)


def api_unit(chunk: Chunk) -> ApiUnit | None:
    """The API object ``chunk`` documents, or None for a prose chunk."""
    anchor = chunk.anchor
    if not anchor or not _DOTTED_RE.match(anchor):
        return None
    name = anchor.rpartition(".")[2]
    if _title_name(chunk.title) != name:
        return None
    # A one-part id is an entry only when the title is exactly that id (a top-level
    # module such as ``griffe``); a one-word prose heading's slug is lower-cased.
    if "." not in anchor and chunk.title != anchor:
        return None
    return ApiUnit(object_id=anchor, kind=_kind(chunk, name), parent=anchor.rpartition(".")[0])


def _title_name(title: str) -> str:
    words = title.strip().split()
    while len(words) > 1 and words[0] in _KIND_WORDS:
        words = words[1:]
    match = _TITLE_NAME_RE.match(" ".join(words))
    return match.group(1).rpartition(".")[2] if match else ""


def _kind(chunk: Chunk, name: str) -> str:
    """What kind of object the entry documents, from its title and text."""
    title, body = chunk.title, chunk.text
    first = title.split()[0] if title.split() else ""
    if first in ("class", "exception") or "Bases: " in body:
        return "class"
    if first == "module" or "." not in chunk.anchor:
        return "module"
    if "(" in title:
        return "class" if name[:1].isupper() else "function"
    if first in ("property", "attribute", "data"):
        return "attribute"
    return "object"


@dataclass(frozen=True)
class Mention:
    """A name in a question that may be an object's: its dotted parts."""

    parts: tuple[str, ...]

    @property
    def text(self) -> str:
        return ".".join(self.parts)


def mentions(query: str) -> list[Mention]:
    """The object names ``query`` mentions, longest first, each once.

    A plain word is a name only when it looks like code: dotted, snake_case, CamelCase, in
    backticks or called (``close()``). A mention that is part of a longer one is dropped.
    """
    found: dict[tuple[str, ...], None] = {}
    for match in _MENTION_RE.finditer(query):
        text = next(group for group in match.groups() if group)
        parts = tuple(part for part in text.split(".") if part)
        if parts and not _is_number_like(parts):
            found.setdefault(parts, None)
    ordered = sorted(found, key=len, reverse=True)
    kept: list[tuple[str, ...]] = []
    for parts in ordered:
        if not any(_is_suffix(parts, longer) or _contains(longer, parts) for longer in kept):
            kept.append(parts)
    return [Mention(parts) for parts in kept]


def _is_number_like(parts: tuple[str, ...]) -> bool:
    return all(part.isdigit() or part[:1].isdigit() for part in parts)


def _is_suffix(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    return len(short) < len(long) and long[-len(short) :] == short


def _contains(long: tuple[str, ...], short: tuple[str, ...]) -> bool:
    return len(short) < len(long) and any(
        long[i : i + len(short)] == short for i in range(len(long) - len(short) + 1)
    )


def resolves(mention: Mention, unit: ApiUnit) -> bool:
    """Whether ``unit`` is the object ``mention`` names: the mention's parts end its id."""
    parts = tuple(unit.object_id.split("."))
    size = len(mention.parts)
    return size <= len(parts) and parts[-size:] == mention.parts


def named_objects(
    query_mentions: Sequence[Mention], chunks: Iterable[Chunk]
) -> list[tuple[Chunk, float]]:
    """The API chunks among ``chunks`` that the mentions resolve to, best first, each with a
    strength: the number of parts the mention matched, shared among the objects it resolves
    to (``is_public`` alone names every ``is_public``; ``Object.is_public`` names one)."""
    units = [(chunk, api_unit(chunk)) for chunk in chunks]
    entries = [(chunk, unit) for chunk, unit in units if unit is not None]
    strength: dict[str, float] = {}
    by_id: dict[str, Chunk] = {}
    for mention in query_mentions:
        matched = [(chunk, unit) for chunk, unit in entries if resolves(mention, unit)]
        objects = {unit.object_id for _, unit in matched}
        for chunk, _unit in matched:
            score = len(mention.parts) / len(objects)
            if score > strength.get(chunk.chunk_id, 0.0):
                strength[chunk.chunk_id] = score
                by_id[chunk.chunk_id] = chunk
    ranked = sorted(strength, key=lambda cid: -strength[cid])
    return [(by_id[cid], strength[cid]) for cid in ranked]
