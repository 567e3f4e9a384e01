"""Split a Markdown page into sections whose anchors and URLs match the published site."""

from __future__ import annotations

import html
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from citewise.models import Section
from citewise.parsing.layout import MKDOCS_LAYOUT, SiteLayout
from citewise.parsing.slugs import UsedAnchors, heading_text, slugify, split_attr_list, unique

__all__ = ["fenced_blocks", "page_path", "page_url", "parse_markdown", "site_base"]

_MARKDOWN_SUFFIXES = (".md", ".markdown")
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
# MkDocs keeps the block as content unless it is a YAML mapping: it must start with a key.
_YAML_KEY_RE = re.compile(r"^[A-Za-z_][\w .-]*:(?:\s|$)")
# Fences may sit inside blockquotes, lists, tabs and admonitions, hence the free indent.
_FENCE_OPEN_RE = re.compile(r"^(?P<indent>[ \t>]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# Python-Markdown's HashHeaderProcessor: no space needed after the #s, trailing #s dropped.
_ATX_RE = re.compile(r"^(?P<level>#{1,6})(?P<text>(?:\\.|[^\\])*?)#*$")
_SETEXT_RE = re.compile(r"^[=-]+[ ]*$")
_HR_RE = re.compile(r"^ {0,3}(?:(?:-[ ]*){3,}|(?:_[ ]*){3,}|(?:\*[ ]*){3,})$")
_EMOJI_RE = re.compile(r":[+\-\w]+:")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_INLINE_LINK_RE = re.compile(
    r"(?P<head>!?\[(?:[^\[\]\\]|\\.|\[[^\[\]]*\])*\]\(\s*)"
    r"(?:<(?P<angled>[^>\n]*)>|(?P<dest>[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*))"
    r"(?P<tail>(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\))"
)
# A definition's target may sit on the line after its label.
_REFERENCE_DEF_BLOCK_RE = re.compile(
    r"^(?P<head>[ \t>]*\[(?!\^)(?P<id>[^\]]+)\]:[ \t]*\n?[ \t]*)(?P<dest><[^>\n]*>|\S+)"
)
# Code spans may run over several lines of a paragraph.
_BLOCK_CODE_SPAN_RE = re.compile(r"(?<![\\`])(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_ESCAPED_RE = re.compile(r"\\([!-/:-@\[-`{-~])")
_REFERENCE_DEF_RE = re.compile(
    r"^(?P<head> {0,3}\[(?!\^)(?P<id>[^\]]+)\]:[ \t]*)(?P<dest><[^>]*>|\S+)"
)


@dataclass(frozen=True)
class _Heading:
    start: int  # index of the heading's first line
    body: int  # index of the first body line (after the underline, for setext)
    level: int
    source: str  # the heading's inline Markdown, attribute list removed
    custom_id: str | None


def site_base(site_url: str, version: str | None) -> str:
    """The root every page URL starts with: ``{site_url}{version}/``, or ``{site_url}``."""
    base = site_url if not site_url or site_url.endswith("/") else site_url + "/"
    return f"{base}{version.strip('/')}/" if version else base


def page_path(doc_id: str, layout: SiteLayout | None = None) -> str:
    """The page's path under the site root: ``a/b.md`` → ``a/b/``, ``a/index.md`` → ``a/``
    (with ``layout``'s ``html`` form: ``a/b.html``, ``a/index.html``)."""
    return (layout or MKDOCS_LAYOUT).page_path(doc_id, _MARKDOWN_SUFFIXES)


def page_url(
    doc_id: str, site_url: str, version: str | None, layout: SiteLayout | None = None
) -> str:
    """The published URL of the page built from ``doc_id``."""
    return site_base(site_url, version) + page_path(doc_id, layout)


def parse_markdown(
    text: str,
    *,
    doc_id: str,
    site_url: str,
    version: str | None,
    scope: str = "",
    layout: SiteLayout | None = None,
) -> list[Section]:
    """Split ``text`` (the source of ``doc_id``) into sections, one per heading.

    Text before the first heading joins the page's first h1 when that heading comes first, and
    otherwise forms a section of its own titled after the page. Headings with an empty body are
    kept, as the site indexes them too.
    """
    lines = _drop_front_matter(text).split("\n")
    headings, in_code = _scan(lines)
    references = {
        " ".join(m["id"].lower().split())
        for line, code in zip(lines, in_code, strict=True)
        if not code and (m := _REFERENCE_DEF_RE.match(line))
    }
    emoji = layout is not None and "pymdownx.emoji" in layout.markdown_extensions
    titles = [heading_text(_without_emoji(h.source) if emoji else h.source, references)
              for h in headings]  # fmt: skip
    page = page_path(doc_id, layout)
    url = site_base(site_url, version) + page
    lines = _rewrite_links(
        lines, in_code, doc_id=doc_id, base=site_base(site_url, version), layout=layout
    )

    used = UsedAnchors(h.custom_id for h in headings if h.custom_id)
    anchors = [
        h.custom_id or unique(slugify(title), used)
        for h, title in zip(headings, titles, strict=True)
    ]
    first_h1 = next((i for i, h in enumerate(headings) if h.level == 1), None)
    page_title = titles[first_h1] if first_h1 is not None else _title_from_name(doc_id)

    def section(title: str, path: tuple[str, ...], level: int, anchor: str, body: str) -> Section:
        return Section(
            doc_id=doc_id,
            title=title,
            heading_path=path,
            level=level,
            anchor=anchor,
            url=f"{url}#{anchor}" if anchor else url,
            page=page,
            text=body,
            scope=scope,
        )

    sections: list[Section] = []
    preamble = _body(lines, 0, headings[0].start if headings else len(lines))
    if (preamble and first_h1 != 0) or (first_h1 is None and headings):
        # A page without an h1 is still a page of the site (its search has an entry for it).
        sections.append(section(page_title, (page_title,), 1, "", preamble))

    stack: list[tuple[int, str]] = []
    for index, heading in enumerate(headings):
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, titles[index]))
        path = tuple(title for _, title in stack)
        if first_h1 is None or stack[0][0] != 1:
            path = (page_title, *path)
        end = headings[index + 1].start if index + 1 < len(headings) else len(lines)
        body = _body(lines, heading.body, end)
        anchor = anchors[index]
        if index == first_h1:
            anchor = ""
            if index == 0 and preamble:
                body = f"{preamble}\n\n{body}" if body else preamble
        sections.append(section(titles[index], path, heading.level, anchor, body))
    return sections


def _without_emoji(source: str) -> str:
    """A heading without its emoji shortcodes (``:warning:``), which pymdownx.emoji renders
    as icons, no part of the heading's text or slug; code spans keep theirs."""
    pieces: list[str] = []
    last = 0
    for span in _BLOCK_CODE_SPAN_RE.finditer(source):
        pieces.append(_EMOJI_RE.sub("", source[last : span.start()]))
        pieces.append(span.group(0))
        last = span.end()
    pieces.append(_EMOJI_RE.sub("", source[last:]))
    return "".join(pieces)


def _drop_front_matter(text: str) -> str:
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    match = _FRONT_MATTER_RE.match(text)
    if match is None:
        return text
    lines = [ln for ln in match.group(1).split("\n") if ln.strip()]
    first = next((ln for ln in lines if not ln.lstrip().startswith("#")), "")
    if _YAML_KEY_RE.match(first) is None:
        return text
    return text[match.end() :]


def fenced_blocks(lines: Sequence[str]) -> list[tuple[int, int]]:
    """The fenced code blocks in ``lines`` as (first line, line after the closing fence).

    This follows pymdownx.superfences, which the site uses: the fence may be indented (tabs,
    admonitions, lists, quotes), it closes only on the very same fence string, a non-blank line
    indented less than the opening fence abandons it (its lines are then ordinary Markdown), and
    a fence never closed is no code block and ends the search for further fences.
    """
    blocks: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        opened = _FENCE_OPEN_RE.match(lines[i])
        if opened is None or (opened["fence"][0] == "`" and "`" in opened["info"]):
            i += 1
            continue
        indent, fence = opened["indent"], opened["fence"]
        j = i + 1
        while j < len(lines):
            line = lines[j]
            if line.strip():
                prefix = len(line) - len(line.lstrip(" \t>"))
                if prefix < len(indent):
                    break  # abandoned: scanning resumes after this line
                content = line[len(indent) :]
                if content.startswith(fence) and not content[len(fence) :].strip(" \t"):
                    blocks.append((i, j + 1))
                    break
            j += 1
        else:
            return blocks  # never closed: the rest of the page is plain Markdown
        i = j + 1
    return blocks


def _scan(lines: list[str]) -> tuple[list[_Heading], list[bool]]:
    """Find the headings and mark the lines that are fenced code (or HTML comments)."""
    headings: list[_Heading] = []
    in_code = [False] * len(lines)
    fences = dict(fenced_blocks(lines))
    for first, after in fences.items():
        in_code[first:after] = [True] * (after - first)
    in_comment = False
    # superfences turns fences back into text inside a block that opens as indented code.
    reverting = False
    reverted_until = 0
    # Python-Markdown only reads a setext heading from the first line of a block; a block
    # restarts after a blank line, a heading, a rule or an indented code block. A fenced block
    # becomes a placeholder line inside its block, so it does not restart one.
    block_start = True
    indented_block = False
    skip_to = 0
    for i, line in enumerate(lines):
        if i < skip_to:
            continue
        if reverting and i in fences:
            reverted_until = fences[i]
            in_code[i:reverted_until] = [False] * (reverted_until - i)
        if in_code[i]:
            block_start = False
            continue
        if in_comment:
            in_code[i] = True
            in_comment = "-->" not in line
            continue
        if line.startswith("<!--") and "-->" not in line[4:]:
            in_code[i] = in_comment = True
            continue
        atx = _ATX_RE.match(line)
        if atx:
            text, custom_id = split_attr_list(atx["text"].strip())
            level = len(atx["level"])
            headings.append(_Heading(i, i + 1, level, text, custom_id))
            block_start = True
            continue
        if not line.strip():
            block_start, indented_block = True, False
            reverting = reverting and i < reverted_until
            continue
        if block_start:
            indented_block = line.startswith("    ")
            reverting = reverting or indented_block
        elif indented_block and not line.startswith("    "):
            block_start, indented_block = True, False
        underline = lines[i + 1] if i + 1 < len(lines) and not in_code[i + 1] else ""
        if block_start and not line.startswith("    ") and _SETEXT_RE.match(underline):
            text, custom_id = split_attr_list(line.strip())
            level = 1 if underline.startswith("=") else 2
            headings.append(_Heading(i, i + 2, level, text, custom_id))
            skip_to = i + 2
            continue
        block_start = _HR_RE.match(line) is not None
    return headings, in_code


def _body(lines: list[str], start: int, end: int) -> str:
    """Lines ``start:end`` without the blank lines around them."""
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(line.rstrip() for line in lines[start:end])


def _title_from_name(doc_id: str) -> str:
    """MkDocs' title for a page without an h1, taken from its file (or folder) name."""
    page = page_path(doc_id).rstrip("/")
    if not page:
        return "Home"
    title = posixpath.basename(page).replace("-", " ").replace("_", " ")
    return title.capitalize() if title.lower() == title else title


def _rewrite_links(
    lines: list[str],
    in_code: list[bool],
    *,
    doc_id: str,
    base: str,
    layout: SiteLayout | None = None,
) -> list[str]:
    """Rewrite relative link targets outside code to the absolute URLs the site serves.

    The page is parsed with markdown-it (CommonMark) to find its links, whatever lines their
    text spans, and its reference definitions (``[id]: target``, the target possibly on the
    next line); each is rewritten in place in its block's source. Fenced code (as
    superfences reads it) and comments are hidden from the parse, and lines are parsed
    without their indentation, as admonitions and tabs hold Markdown, not code. Links inside
    HTML blocks (``<div markdown>``) are rewritten where their syntax is found.
    """
    source = doc_id.replace("\\", "/").lstrip("/")
    current = base + page_path(source, layout)

    def resolve(target: str) -> str:
        return _resolve(target, source=source, base=base, current=current, layout=layout)

    if not any("](" in line or "]:" in line for line in lines):
        return lines
    parser = _link_parser()
    masked = ["" if code else line.lstrip(" \t") for line, code in zip(lines, in_code, strict=True)]
    blocks: dict[tuple[int, int], list[str] | None] = {}
    references: list[tuple[int, int]] = []
    for offset, tokens, env in _parsed_runs(parser, masked):
        references.extend((offset + d["map"][0], offset + d["map"][1])
                          for d in env.get("references", {}).values())  # fmt: skip
        _collect_links(tokens, offset, blocks)
    out = list(lines)
    for (first, after), hrefs in blocks.items():
        block = "\n".join(out[first:after])
        rewritten = _rewrite_inline(block, hrefs, resolve, parser.normalizeLink)
        if rewritten != block:
            out[first:after] = rewritten.split("\n")
    for first, after in references:
        block = "\n".join(out[first:after])
        match = _REFERENCE_DEF_BLOCK_RE.match(block)
        if match is None:
            continue
        dest = match["dest"]
        new = f"<{resolve(dest[1:-1])}>" if dest.startswith("<") else resolve(dest)
        out[first:after] = (match["head"] + new + block[match.end() :]).split("\n")
    return out


def _parsed_runs(parser: Any, masked: list[str]) -> list[tuple[int, list[Any], dict[str, Any]]]:
    """markdown-it's parse of each run of non-blank lines that holds link syntax, with the
    run's first line: a link never crosses a blank line, and parsing only these runs keeps a
    long page cheap."""
    runs: list[tuple[int, list[Any], dict[str, Any]]] = []
    start = 0
    while start < len(masked):
        if not masked[start].strip():
            start += 1
            continue
        end = start
        while end < len(masked) and masked[end].strip():
            end += 1
        text = "\n".join(masked[start:end])
        if "](" in text or "]:" in text:
            env: dict[str, Any] = {}
            runs.append((start, parser.parse(text, env), env))
        start = end
    return runs


def _collect_links(
    tokens: list[Any], offset: int, blocks: dict[tuple[int, int], list[str] | None]
) -> None:
    """Each inline block's link targets by its lines (None: an HTML block, not parsed)."""
    for token in tokens:
        if token.map is None:
            continue
        span = (offset + token.map[0], offset + token.map[1])
        if token.type == "html_block":
            blocks[span] = None  # no parse of its inside: every link-looking target
        elif token.type == "inline" and token.children:
            found = [child.attrGet("href") or child.attrGet("src") for child in _links(token)]
            if found:
                known = blocks.setdefault(span, [])
                if known is not None:
                    known.extend(str(href) for href in found)


def _link_parser() -> Any:
    global _PARSER
    if _PARSER is None:
        from markdown_it import MarkdownIt

        _PARSER = MarkdownIt("commonmark").enable("table")
    return _PARSER


_PARSER: Any = None


def _links(token: Any) -> list[Any]:
    found = []
    for child in token.children or []:
        if child.type in ("link_open", "image"):
            found.append(child)
        if child.children:
            found.extend(_links(child))
    return found


def _rewrite_inline(
    block: str,
    hrefs: list[str] | None,
    resolve: Callable[[str], str],
    normalise: Callable[[str], str],
) -> str:
    """Rewrite the inline links of ``block`` whose targets the parser saw as links
    (``hrefs``; None: every one), leaving code spans alone."""
    wanted = Counter(hrefs) if hrefs is not None else None

    def inline(match: re.Match[str]) -> str:
        raw = match["angled"] if match["angled"] is not None else match["dest"]
        if wanted is not None:
            key = normalise(html.unescape(_ESCAPED_RE.sub(r"\1", raw)))
            if wanted[key] <= 0:
                return match.group(0)
            wanted[key] -= 1
        if match["angled"] is not None:
            return f"{match['head']}<{resolve(raw)}>{match['tail']}"
        return f"{match['head']}{resolve(raw)}{match['tail']}"

    pieces: list[str] = []
    last = 0
    for span in _BLOCK_CODE_SPAN_RE.finditer(block):
        pieces.append(_INLINE_LINK_RE.sub(inline, block[last : span.start()]))
        pieces.append(span.group(0))
        last = span.end()
    pieces.append(_INLINE_LINK_RE.sub(inline, block[last:]))
    return "".join(pieces)


def _resolve(
    target: str, *, source: str, base: str, current: str, layout: SiteLayout | None = None
) -> str:
    if not target:
        return target
    if target.startswith("#"):
        return current + target
    if _SCHEME_RE.match(target) or target.startswith("/"):
        return target
    path, hash_mark, fragment = target.partition("#")
    path, question, query = path.partition("?")
    if not path:
        return current + question + query + hash_mark + fragment
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(source), path or "."))
    if resolved == ".." or resolved.startswith("../"):
        return target  # outside the docs: nothing the site could have rewritten
    if path.lower().endswith(_MARKDOWN_SUFFIXES):
        url = base + page_path(resolved, layout)
    elif resolved == ".":
        url = base
    else:
        url = base + resolved + ("/" if path.endswith("/") else "")
    return url + question + query + hash_mark + fragment
