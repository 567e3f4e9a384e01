"""The parts of an answer the grounding check reads: blocks, code, links and sentences.

Answers are Markdown. A *block* is a paragraph, a list item or a fenced code block, with its
span in the answer text (the span an attributed citation covers). Spans are Python string
indices, as :class:`citewise.models.Citation` uses them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FENCE = re.compile(
    r"^[ \t]*(```+|~~~+)[ \t]*([\w+-]*)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S
)
INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
MARKDOWN_LINK = re.compile(
    r"\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?(?P<url>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
BARE_URL = re.compile(r"https?://[^\s<>()\[\]\"'`]+")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\[(\"'])|\n")


@dataclass(frozen=True)
class Block:
    """A paragraph, list item, heading or code block of an answer, and where it is."""

    kind: str  # "paragraph" | "item" | "heading" | "code"
    start: int
    end: int
    text: str
    language: str = ""


@dataclass(frozen=True)
class Link:
    """A Markdown link or a bare URL in an answer."""

    url: str
    start: int
    end: int


def blocks(text: str) -> list[Block]:
    """The answer's blocks in order: fenced code blocks whole, the rest split at blank
    lines, list items and headings."""
    found: list[Block] = []
    position = 0
    for fence in FENCE.finditer(text):
        found += _prose_blocks(text, position, fence.start())
        found.append(Block("code", fence.start(), fence.end(), fence.group(0), fence.group(2)))
        position = fence.end()
    found += _prose_blocks(text, position, len(text))
    return found


def _prose_blocks(text: str, start: int, end: int) -> list[Block]:
    found: list[Block] = []
    current: list[tuple[int, int]] = []  # line spans of the block being read
    kind = "paragraph"

    def close() -> None:
        if current:
            first, last = current[0][0], current[-1][1]
            found.append(Block(kind, first, last, text[first:last]))
            current.clear()

    offset = start
    for line in text[start:end].splitlines(keepends=True):
        stripped = line.rstrip("\r\n")
        span = (offset, offset + len(stripped))
        offset += len(line)
        if not stripped.strip():
            close()
            continue
        if _HEADING.match(stripped):
            close()
            found.append(Block("heading", *span, stripped))
            continue
        if _LIST_ITEM.match(stripped):
            close()
            kind = "item"
        elif not current:
            kind = "paragraph"
        current.append(span)
    close()
    return found


def links(text: str) -> list[Link]:
    """Every Markdown link target and bare http(s) URL, in order."""
    found: list[Link] = []
    taken: list[tuple[int, int]] = []
    for match in MARKDOWN_LINK.finditer(text):
        taken.append(match.span())
        found.append(Link(match.group("url"), *match.span()))
    for match in BARE_URL.finditer(text):
        start = match.start()
        if any(s <= start < e for s, e in taken):
            continue
        url = match.group(0).rstrip(".,;:!?")
        found.append(Link(url, start, start + len(url)))
    found.sort(key=lambda link: link.start)
    return found


def sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the sentence (within its line) that holds ``text[start:end]``."""
    before = [m.end() for m in _SENTENCE_END.finditer(text, 0, start)]
    first = before[-1] if before else 0
    after = _SENTENCE_END.search(text, end)
    return first, after.start() if after else len(text)


def without_links(text: str) -> str:
    """``text`` with each Markdown link replaced by its text and bare URLs dropped."""
    return BARE_URL.sub(" ", MARKDOWN_LINK.sub(lambda m: m.group("text"), text))
