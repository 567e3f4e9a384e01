"""Split an HTML page into sections at h1-h6, its content converted to light Markdown."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from citewise.models import Section
from citewise.parsing.common import (
    Heading,
    Part,
    assemble_sections,
    file_url,
    image_text,
    markdown_table,
)

if TYPE_CHECKING:
    from bs4 import BeautifulSoup
    from bs4.element import PageElement, Tag

__all__ = ["HTMLParser", "parse_html"]

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Never content: code, media and interactive chrome.
_DROPPED = ("script", "style", "noscript", "template", "iframe", "object", "embed", "svg",
            "canvas", "form", "button", "select", "nav", "aside", "head")  # fmt: skip
_BOILERPLATE_ROLES = ("navigation", "banner", "contentinfo", "search", "complementary")
_INLINE = frozenset(
    "a abbr b bdi bdo cite code data del dfn em font i img ins kbd label mark q s samp small "
    "span strong sub sup time tt u var wbr br".split()
)
_CODE = frozenset({"code", "kbd", "samp", "tt"})
_BLOCKY = (*_HEADINGS, "p", "div", "pre", "ul", "ol", "table", "section", "article", "blockquote")
_PERMALINK_TEXT = frozenset({"", "¶", "§", "#", "🔗", "link"})
_LANGUAGE_RE = re.compile(r"^(?:language|lang|highlight)-([\w+#.-]+)$")
_NO_LANGUAGE = frozenset({"default", "none", "text", "plaintext", "nohighlight"})
_SPACE_RE = re.compile(r"\s+")
_BACKTICKS_RE = re.compile(r"`+")


class HTMLParser:
    """HTML pages (``.html``, ``.htm``): see :func:`parse_html`."""

    def parse(
        self, text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]:
        return parse_html(text, doc_id=doc_id, site_url=site_url, version=version, scope=scope)


def parse_html(
    text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
) -> list[Section]:
    """Split the HTML page ``text`` into one section per h1-h6 heading.

    Boilerplate goes first: scripts, styles, forms, ``nav``, ``aside``, landmark roles such as
    ``role=navigation``, and page headers and footers; when the page has a ``<main>`` (or
    ``role=main``, or a single ``<article>``) only that is read. Anchors are the heading's
    ``id`` (or its permalink's target, or the id of the ``<section>`` it opens) and otherwise
    its ``slugify`` slug. Text becomes light Markdown: paragraphs, ``- `` lists, fenced code
    for ``<pre>``, Markdown tables, inline code, and links resolved against the page URL;
    an image becomes its ``alt`` (or ``title``) text as ``[Image: …]``, and a
    ``<figcaption>`` a paragraph of its own.
    """
    from bs4 import BeautifulSoup  # here, not at the top: it adds 0.1 s to every CLI start

    soup = BeautifulSoup(text, "html.parser")
    title_tag = soup.find("title")
    page_title = " ".join(title_tag.get_text().split()) if title_tag else ""
    base = file_url(doc_id, site_url, version)
    base_tag = soup.find("base", href=True)
    if base_tag is not None:
        base = urljoin(base, _attr(base_tag, "href"))
    root = _content_root(soup)
    renderer = _Renderer(base)
    renderer.render(root)
    return assemble_sections(
        renderer.parts,
        doc_id=doc_id,
        site_url=site_url,
        version=version,
        scope=scope,
        fallback_title=page_title or None,
    )


def _attr(tag: Tag, name: str) -> str:
    value = tag.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)


def _content_root(soup: BeautifulSoup) -> Tag:
    """Strip boilerplate from ``soup`` and return the element that holds the page's content."""
    for tag in soup.find_all(_DROPPED):
        tag.decompose()
    for tag in soup.find_all(role=True):
        if not tag.decomposed and _attr(tag, "role").lower() in _BOILERPLATE_ROLES:
            tag.decompose()
    for tag in soup.find_all(hidden=True):
        if not tag.decomposed:
            tag.decompose()
    articles = soup.find_all("article")
    root = (
        soup.find("main") or soup.find(role="main") or (articles[0] if len(articles) == 1 else None)
    )
    chosen = root is not None
    root = root or soup.find("body") or soup
    for tag in root.find_all(("header", "footer")):
        if tag.decomposed:
            continue
        # An article's own header holds its title; a page header is site chrome.
        if tag.name == "footer" or not chosen or tag.find(_HEADINGS) is None:
            tag.decompose()
    return root


class _Renderer:
    """Walks the content in document order, cutting it into parts at headings."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.parts: list[Part] = [Part(None)]
        self.inline: list[str] = []

    def render(self, node: Tag) -> None:
        self._block(node)
        self._flush()

    def _emit(self, block: str) -> None:
        if block.strip():
            self.parts[-1].blocks.append(block)

    def _flush(self) -> None:
        text = "".join(self.inline)
        self.inline.clear()
        lines = (" ".join(line.split()) for line in text.split("\n"))
        self._emit("\n".join(line for line in lines if line))

    def _block(self, node: Tag) -> None:
        from bs4.element import NavigableString, Tag

        for child in node.children:
            if isinstance(child, NavigableString):
                self.inline.append(_string(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name
            if name in _INLINE and (name == "br" or child.find(_BLOCKY) is None):
                self.inline.append(self._inline_piece(child))
                continue
            self._flush()
            if name in _HEADINGS:
                heading = _heading(child)
                if heading is not None:
                    self.parts.append(Part(heading))
            elif name == "pre":
                self._emit(_fenced(child))
            elif name in ("ul", "ol"):
                self._emit("\n".join(self._list(child, 0)))
            elif name == "table":
                self._emit(markdown_table(self._table_rows(child)))
            elif name != "hr":
                self._block(child)
                self._flush()

    def _inline_piece(self, node: PageElement) -> str:
        from bs4.element import NavigableString, Tag

        if isinstance(node, NavigableString):
            return _string(node)
        if not isinstance(node, Tag):
            return ""
        if node.name == "br":
            return "\n"
        if node.name == "img":
            return image_text(_attr(node, "alt") or _attr(node, "title"))
        if node.name in _CODE:
            return _code_span(node.get_text())
        text = "".join(self._inline_piece(child) for child in node.children)
        if node.name == "a":
            return self._link(node, text)
        if node.name not in _INLINE:
            return f" {text} "  # block content inside a cell or list item: keep words apart
        return text

    def _link(self, node: Tag, text: str) -> str:
        href = _attr(node, "href").strip()
        label = " ".join(text.split())
        if not label or not href or href.lower().startswith(("javascript:", "data:")):
            return text
        return f"[{label}]({urljoin(self.base, href)})"

    def _flat(self, node: Tag) -> str:
        return " ".join("".join(self._inline_piece(c) for c in node.children).split())

    def _list(self, node: Tag, depth: int) -> list[str]:
        from bs4.element import Tag

        lines: list[str] = []
        for item in node.find_all("li", recursive=False):
            words: list[str] = []
            nested: list[str] = []
            for child in item.children:
                if isinstance(child, Tag) and child.name in ("ul", "ol"):
                    nested.extend(self._list(child, depth + 1))
                else:
                    words.append(self._inline_piece(child))
            text = " ".join("".join(words).split())
            if text:
                lines.append(f"{'  ' * depth}- {text}")
            lines.extend(nested)
        return lines

    def _table_rows(self, table: Tag) -> list[list[str]]:
        rows: list[list[str]] = []
        for row in table.find_all("tr"):
            if row.find_parent("table") is not table:
                continue  # a nested table's row: its text is already in the outer cell
            cells: list[str] = []
            for cell in row.find_all(("th", "td"), recursive=False):
                cells.append(self._flat(cell))
                span = _attr(cell, "colspan")
                # Pad spanned columns so later cells stay under their headers.
                cells.extend([""] * (int(span) - 1 if span.isdigit() and int(span) > 1 else 0))
            rows.append(cells)
        return rows


def _string(node: PageElement) -> str:
    from bs4.element import NavigableString, PreformattedString

    if isinstance(node, PreformattedString) or not isinstance(node, NavigableString):
        return ""  # comments, doctypes, CDATA, processing instructions
    return _SPACE_RE.sub(" ", str(node))


def _heading(tag: Tag) -> Heading | None:
    """The heading's level, text (permalinks removed) and own anchor, if it has one."""
    anchor = _attr(tag, "id")
    for link in tag.find_all("a"):
        href = _attr(link, "href")
        classes = _attr(link, "class").split()
        text = link.get_text().strip()
        if href.startswith("#") and (
            text in _PERMALINK_TEXT or {"headerlink", "anchor", "permalink"} & set(classes)
        ):
            anchor = anchor or href[1:]
            link.decompose()
        elif not text and not href and (_attr(link, "id") or _attr(link, "name")):
            anchor = anchor or _attr(link, "id") or _attr(link, "name")
    parent = tag.parent
    if not anchor and parent is not None and parent.name in ("section", "div"):
        # Sphinx puts the id on the <section> a heading opens, not on the heading.
        if parent.find(_HEADINGS) is tag:
            anchor = _attr(parent, "id")
    title = " ".join(tag.get_text().split())
    if not title:
        return None
    return Heading(int(tag.name[1]), title, anchor or None)


def _code_span(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return ""
    longest = max((len(run) for run in _BACKTICKS_RE.findall(text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if "`" in text else text
    return f"{fence}{padded}{fence}"


def _fenced(pre: Tag) -> str:
    """A ``<pre>`` as a fenced code block, its language taken from a ``language-*`` class."""
    code = pre.get_text()
    code = code[1:] if code.startswith("\n") else code
    code = code.rstrip()
    if not code:
        return ""
    language = ""
    candidates = [pre, *pre.find_all("code", limit=1)]
    if pre.parent is not None:
        candidates.append(pre.parent)
    for tag in candidates:
        for name in _attr(tag, "class").split():
            match = _LANGUAGE_RE.match(name)
            if match and match.group(1).lower() not in _NO_LANGUAGE:
                language = match.group(1)
                break
        if language:
            break
    longest = max((len(run) for run in _BACKTICKS_RE.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code}\n{fence}"
