"""What the HTML renderer reads off single elements: their text, a heading's own anchor,
permalinks, code blocks and their language; each walk iterative (no recursion limit)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bs4.element import PageElement, Tag

__all__ = [
    "BLOCKY",
    "HEADINGS",
    "code_span",
    "fenced",
    "holding",
    "is_glyph_link",
    "is_permalink",
    "own_anchor",
    "pre_text",
    "string_text",
    "text_of",
]

HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
BLOCKY = frozenset({*HEADINGS, "p", "div", "pre", "ul", "ol", "table", "section", "article",
                    "blockquote", "dl", "details", "figure"})  # fmt: skip
_GLYPHS = frozenset({"¶", "§", "#", "🔗", "¤"})
_PERMALINK_TEXT = _GLYPHS | {"", "link"}
_PERMALINK_CLASSES = frozenset({"headerlink", "anchor", "permalink", "header-anchor", "hash-link"})
_LANGUAGE_RE = re.compile(r"^(?:language|lang|highlight)-([\w+#.-]+)$")
_NO_LANGUAGE = frozenset({"default", "none", "text", "plaintext", "nohighlight"})
_SPACE_RE = re.compile(r"\s+")
_BACKTICKS_RE = re.compile(r"`+")


def _attr(tag: Tag, name: str) -> str:
    value = tag.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)


def _classes(tag: Tag) -> set[str]:
    return set(_attr(tag, "class").split())


def holding(root: Tag) -> tuple[set[int], set[int]]:
    """The ids of the elements under ``root`` that hold a block element, and of those that
    hold a heading (found in one walk, so no element needs a search of its own subtree)."""
    from bs4.element import Tag

    blocks: set[int] = set()
    headings: set[int] = set()
    for tag in root.descendants:
        if not isinstance(tag, Tag):
            continue
        for holding, names in ((blocks, BLOCKY), (headings, HEADINGS)):
            if tag.name not in names:
                continue
            parent = tag.parent
            while parent is not None and id(parent) not in holding:
                holding.add(id(parent))
                if parent is root:
                    break
                parent = parent.parent
    return blocks, headings


def text_of(tag: Tag, skip: Callable[[Tag], bool]) -> str:
    """The text under ``tag`` without the subtrees ``skip`` says to leave out."""
    from bs4.element import NavigableString, Tag

    pieces: list[str] = []
    stack: list[Iterator[PageElement]] = [iter(tag.children)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        elif isinstance(child, Tag):
            if not skip(child):
                stack.append(iter(child.children))
        elif isinstance(child, NavigableString):
            pieces.append(string_text(child))
    return "".join(pieces)


def pre_text(pre: Tag) -> str:
    """A ``<pre>``'s text, a ``<br>`` as a line break (Docusaurus' code lines end in one)."""
    from bs4.element import NavigableString, PreformattedString, Tag

    pieces: list[str] = []
    for element in pre.descendants:
        if isinstance(element, Tag) and element.name == "br":
            pieces.append("\n")
        elif isinstance(element, NavigableString) and not isinstance(element, PreformattedString):
            pieces.append(str(element))
    return "".join(pieces)


def is_glyph_link(tag: Tag) -> bool:
    """A permalink in running text (a figure caption's ``¶``): a permalink class or glyph."""
    if _classes(tag) & _PERMALINK_CLASSES:
        return True
    return _attr(tag, "href").startswith("#") and tag.get_text().strip() in _GLYPHS


def is_permalink(tag: Tag) -> bool:
    """A heading's permalink (``¶``, ``#``, ``¤``, Docusaurus' and VitePress' anchors) or a
    mkdocstrings label: not part of its title."""
    if _classes(tag) & (_PERMALINK_CLASSES | {"doc-labels"}):
        return True
    if tag.name == "a" and _attr(tag, "href").startswith("#"):
        return tag.get_text().strip() in _PERMALINK_TEXT
    return False


def own_anchor(tag: Tag, ids: frozenset[str]) -> str:
    """The heading's own anchor, only ever an id the page has: its ``id``, its permalink's
    target, an empty ``<a id|name>`` in it, the ``<section>``/``<div>`` it opens."""
    from bs4.element import Tag

    candidates = [_attr(tag, "id")]
    for link in tag.find_all("a"):
        href = _attr(link, "href")
        if href.startswith("#") and is_permalink(link):
            candidates.append(href[1:])
        elif not link.get_text().strip() and not href:
            candidates.extend((_attr(link, "id"), _attr(link, "name")))
    parent = tag.parent
    if isinstance(parent, Tag) and parent.name in ("section", "div", "article"):
        # Sphinx puts the id on the <section> a heading opens, not on the heading.
        first = next((c for c in parent.children if isinstance(c, Tag)), None)
        if first is tag or parent.find(list(HEADINGS)) is tag:
            candidates.append(_attr(parent, "id"))
    previous = tag.find_previous_sibling()
    if previous is not None and previous.name in ("a", "span") and not previous.get_text().strip():
        candidates.extend((_attr(previous, "id"), _attr(previous, "name")))
    from urllib.parse import unquote

    for candidate in candidates:
        for form in (candidate, unquote(candidate)):
            if form and form in ids:
                return form
    return ""


def string_text(node: PageElement) -> str:
    from bs4.element import NavigableString, PreformattedString

    if isinstance(node, PreformattedString) or not isinstance(node, NavigableString):
        return ""  # comments, doctypes, CDATA, processing instructions
    return _SPACE_RE.sub(" ", str(node))


def code_span(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return ""
    longest = max((len(run) for run in _BACKTICKS_RE.findall(text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if "`" in text else text
    return f"{fence}{padded}{fence}"


def fenced(pre: Tag) -> str:
    """A ``<pre>`` as a fenced code block, its language from a ``language-*`` or
    ``highlight-*`` class on it, its ``<code>`` or the two elements around it."""
    code = pre_text(pre)
    code = code[1:] if code.startswith("\n") else code
    code = code.rstrip()
    if not code:
        return ""
    language = ""
    candidates = [pre, *pre.find_all("code", limit=1)]
    parent = pre.parent
    for _ in range(2):
        if parent is None:
            break
        candidates.append(parent)
        parent = parent.parent
    for tag in candidates:
        classes = _attr(tag, "class").split()
        if "doc-signature" in classes:
            language = "python"
        for name in classes:
            match = _LANGUAGE_RE.match(name)
            if match and match.group(1).lower() not in _NO_LANGUAGE:
                language = match.group(1)
                break
        if language:
            break
    longest = max((len(run) for run in _BACKTICKS_RE.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code}\n{fence}"
