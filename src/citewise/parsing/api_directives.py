"""Where a Markdown page asks for API documentation: mkdocstrings' ``::: identifier`` lines.

mkdocstrings' block processor matches ``::: identifier`` at the start of a block's line, also
after a heading's hashes (``## ::: pkg.Class``: the heading's level becomes the object's), and
inside the blocks Markdown nests (an admonition or a collapsible ``??? note``, a tab, a list
item), where the line is indented under its container. The YAML options follow, indented four
more spaces. Lines in fenced code are never directives.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from citewise.parsing.markdown import fenced_blocks

__all__ = ["DIRECTIVE_RE", "HEADING_DIRECTIVE_RE", "Directive", "find_directives", "has_directives"]

# `::: identifier`, after optional indentation and heading hashes (mkdocstrings' own regex
# with the indentation a nesting block leaves).
DIRECTIVE_RE = re.compile(r"^(?P<indent> *)(?P<heading>#{1,6} +|)::: ?(?P<identifier>[\w.:-]+) *$")
# A heading's title that is a directive (the Markdown parser has made it a section).
HEADING_DIRECTIVE_RE = re.compile(r"^::: ?(?P<identifier>[\w.:-]+)$")
# Lines that open a block whose content is indented under them.
_CONTAINER_RE = re.compile(r"^ *(?:(?:!!!|\?\?\?\+?|===)(?: |$)|[-*+] |\d+[.)] |> ?)")
_SPHINX_AUTO_RE = re.compile(
    r"^\s*(?:\.\. +|[`:]{3,}\{)(?:py:)?auto(?:module|class|exception|function|method|"
    r"attribute|data|property|decorator)(?:::|\})",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Directive:
    """One ``::: identifier`` and its own options; ``heading_level`` when it is a heading."""

    identifier: str
    options: dict[str, Any]
    heading_level: int = 0


def has_directives(text: str) -> bool:
    """Whether ``text`` has an API directive: a Markdown ``:::`` line outside fenced code,
    or a Sphinx ``.. autoclass::`` (``autofunction``, ``automodule``…)."""
    if _SPHINX_AUTO_RE.search(text):
        return True
    if ":::" not in text:
        return False
    lines = text.split("\n")
    return bool(_directive_lines(lines))


def find_directives(text: str) -> tuple[str, list[Directive]]:
    """The text without its directives (and their options blocks), and the directives."""
    lines = text.split("\n")
    starts = _directive_lines(lines)
    if not starts:
        return text, []
    kept: list[str] = []
    found: list[Directive] = []
    i = 0
    while i < len(lines):
        match = DIRECTIVE_RE.match(lines[i]) if i in starts else None
        if match is None:
            kept.append(lines[i])
            i += 1
            continue
        width = len(match["indent"]) + 4
        j = i + 1
        block: list[str] = []
        while j < len(lines) and (lines[j].startswith(" " * width) or not lines[j].strip()):
            block.append(lines[j][width:])
            j += 1
        level = match["heading"].count("#")
        found.append(Directive(match["identifier"], directive_options(block), level))
        i = j
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept), found


def directive_options(block: Iterable[str]) -> dict[str, Any]:
    """The ``options:`` table of a directive's YAML block (already dedented)."""
    text = "\n".join(block)
    if not text.strip():
        return {}
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    options = data.get("options") if isinstance(data, dict) else None
    return options if isinstance(options, dict) else {}


def _directive_lines(lines: Sequence[str]) -> set[int]:
    code = {i for first, after in fenced_blocks(lines) for i in range(first, after)}
    found: set[int] = set()
    for index, line in enumerate(lines):
        if index in code or ":::" not in line:
            continue
        match = DIRECTIVE_RE.match(line)
        if match is None:
            continue
        if match["indent"] and not _nested(lines, index, len(match["indent"])):
            continue  # an indented code block, not a directive
        found.add(index)
    return found


def _nested(lines: Sequence[str], index: int, indent: int) -> bool:
    """Whether an indented line sits in a container block (admonition, tab, list item): the
    nearest line above it that is indented less opens one."""
    for above in range(index - 1, -1, -1):
        line = lines[above]
        if not line.strip():
            continue
        if len(line) - len(line.lstrip(" ")) < indent:
            return bool(_CONTAINER_RE.match(line))
    return False
