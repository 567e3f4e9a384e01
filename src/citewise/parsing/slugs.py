"""Heading anchors as Python-Markdown's ``toc`` extension makes them: text, slug and uniqueness."""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Container, Iterable, MutableSet

__all__ = ["heading_text", "slugify", "split_attr_list", "unique"]

# Python-Markdown's own table: a backslash before any other character stays literal.
_ESCAPABLE = frozenset("\\`*_{}[]()>#+-.!|")
_IDCOUNT_RE = re.compile(r"^(.*)_([0-9]+)$")
# attr_list only reads a trailing `{...}` on a heading when a space separates it from the text.
_ATTR_LIST_RE = re.compile(r"[ ]+\{:?[ ]*([^}\n ][^\n]*?)[ ]*\}[ ]*$")
_ATTR_TOKEN_RE = re.compile(r"""([\w:-]+)=(?:"([^"]*)"|'([^']*)'|(\S+))|(\S+)""")
_CODE_SPAN_RE = re.compile(r"(?<![\\`])(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_ESCAPE_RE = re.compile(r"\\(.)")
_IMAGE_RE = re.compile(r"!\[((?:[^\[\]]|\[[^\[\]]*\])*)\](?:\([^)]*\)|\[[^\]]*\])?")
_INLINE_LINK_RE = re.compile(
    r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"  # the link text, which is what stays
    r"\((?:<[^>]*>|[^()\s]*(?:\([^()]*\)[^()\s]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)"
)
# `[text][ref]`, `[text][]` and `[text]`: links only when `ref` (or `text`) is defined.
_REFERENCE_LINK_RE = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\](?: ?\[([^\]]*)\])?(?!\()")
_AUTOLINK_RE = re.compile(r"<((?:https?|ftp)://[^>\s]+|mailto:[^>\s]+)>")
_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_STAR_EMPHASIS_RE = re.compile(r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1")
# Underscores only emphasise at word edges ("smart" emphasis), so snake_case survives.
_UNDERSCORE_EMPHASIS_RE = re.compile(r"(?<!\w)(_{1,3})(?!_)(.+?)(?<!_)\1(?!\w)")
_PLACEHOLDER_RE = re.compile("\x02(\\d+)\x03")


def slugify(value: str, separator: str = "-") -> str:
    """Python-Markdown's ``toc.slugify``: ASCII-fold, drop non-word characters, join with ``-``."""
    value = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(rf"[{re.escape(separator)}\s]+", separator, value)


class UsedAnchors(set[str]):
    """A page's anchors so far, remembering per base the lowest number that may be free, so
    a page of 100,000 equal headings numbers them in linear time, not quadratic."""

    def __init__(self, anchors: Iterable[str] = ()) -> None:
        super().__init__(anchors)
        self.free_from: dict[str, int] = {}


def unique(anchor: str, used: MutableSet[str]) -> str:
    """Return ``anchor`` or its first free ``_1``, ``_2``... variant, and mark it used.

    An anchor that already ends in ``_<n>`` continues counting from ``n`` (as ``toc`` does), and an
    empty anchor becomes ``_1``. With :class:`UsedAnchors`, numbers already found taken are
    not tried again (anchors are only ever added, so they stay taken).
    """
    if anchor in used or not anchor:
        match = _IDCOUNT_RE.match(anchor)
        base, count = (match.group(1), int(match.group(2))) if match else (anchor, 0)
        count += 1
        hints = used.free_from if isinstance(used, UsedAnchors) else None
        if hints is not None:
            count = max(count, hints.get(base, 0))
        while f"{base}_{count}" in used:
            count += 1
        if hints is not None:
            hints[base] = count + 1
        anchor = f"{base}_{count}"
    used.add(anchor)
    return anchor


def split_attr_list(heading: str) -> tuple[str, str | None]:
    """Split a trailing ``{ #id .class }`` attribute list off a heading: (text, id or None)."""
    match = _ATTR_LIST_RE.search(heading)
    if match is None:
        return heading, None
    anchor: str | None = None
    for token in _ATTR_TOKEN_RE.finditer(match.group(1)):
        key, bare = token.group(1), token.group(5)
        if bare is not None and bare.startswith("#") and len(bare) > 1:
            anchor = bare[1:]
        elif key == "id":
            anchor = token.group(2) or token.group(3) or token.group(4) or ""
    return heading[: match.start()], anchor


def heading_text(source: str, references: Container[str] = ()) -> str:
    """The plain text of a heading's inline Markdown, as ``toc`` sees it before slugifying.

    Code spans keep their content, links and images become their text (images vanish, being
    ``<img>`` tags), HTML tags and emphasis markers go, entities are decoded and whitespace is
    collapsed. ``references`` holds the page's link reference ids (lowercase): a reference link
    to any other id stays literal text, brackets and all.
    """
    kept: list[str] = []

    def protect(text: str) -> str:
        kept.append(text)
        return f"\x02{len(kept) - 1}\x03"

    # Code spans and escapes are literal text: hide them from the later rewrites.
    text = _CODE_SPAN_RE.sub(lambda m: protect(m.group(2).strip()), source)
    text = _ESCAPE_RE.sub(
        lambda m: protect(m.group(1)) if m.group(1) in _ESCAPABLE else m.group(0), text
    )
    text = _IMAGE_RE.sub("", text)
    text = _AUTOLINK_RE.sub(lambda m: protect(m.group(1)), text)

    def reference(match: re.Match[str]) -> str:
        ref = match.group(2) or match.group(1)
        if " ".join(ref.lower().split()) in references:
            return match.group(1)
        return protect(match.group(0))

    previous = None
    while previous != text:
        previous = text
        text = _INLINE_LINK_RE.sub(r"\1", text)
    text = _REFERENCE_LINK_RE.sub(reference, text)
    text = _COMMENT_RE.sub("", text)
    text = _TAG_RE.sub("", text)
    previous = None
    while previous != text:
        previous = text
        text = _STAR_EMPHASIS_RE.sub(r"\2", text)
        text = _UNDERSCORE_EMPHASIS_RE.sub(r"\2", text)
    text = html.unescape(text)
    # Restore innermost-last: a protected piece may itself hold placeholders.
    while _PLACEHOLDER_RE.search(text):
        text = _PLACEHOLDER_RE.sub(lambda m: kept[int(m.group(1))], text)
    return " ".join(text.split())
