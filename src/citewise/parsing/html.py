"""Split an HTML page into sections at its headings and API entries, as light Markdown.

The page's generator is recognised (:mod:`citewise.parsing.html_themes`) so only its content
is read; anchors are only ever ids the page has; the walk is iterative, so no nesting depth
raises ``RecursionError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
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
from citewise.parsing.doc_metadata import html_metadata, with_metadata
from citewise.parsing.html_api import (
    is_object_description,
    mkdocstrings_entry,
    mkdocstrings_target,
    sphinx_entry,
    title_for,
)
from citewise.parsing.html_text import (
    HEADINGS,
    code_span,
    fenced,
    holding,
    is_glyph_link,
    is_permalink,
    own_anchor,
    string_text,
    text_of,
)
from citewise.parsing.html_themes import Indexed, content_root, index_page, nav_scope, recognise

if TYPE_CHECKING:
    from bs4.element import PageElement, Tag

__all__ = ["HTMLParser", "page_ids", "parse_html"]

_INLINE = frozenset(
    "a abbr b bdi bdo cite code data del dfn em font i img ins kbd label mark q s samp small "
    "span strong sub sup time tt u var wbr br".split()
)
_CODE = frozenset({"code", "kbd", "samp", "tt"})
_SPACE_RE = re.compile(r"\s+")
# A <title>'s site name after the page's own ("Loading - Griffe", "Intro | My Site").
_TITLE_SUFFIX_RE = re.compile(r"\s+[-|–—·]\s+")
# Admonitions: the container's classes, and the classes of the element holding its label.
_ADMONITION_CLASSES = frozenset({"admonition", "theme-admonition", "custom-block", "alert"})
_ADMONITION_TITLES = ("admonition-title", "custom-block-title")


class HTMLParser:
    """HTML pages (``.html``, ``.htm``): see :func:`parse_html`."""

    def parse(
        self, text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]:
        return parse_html(text, doc_id=doc_id, site_url=site_url, version=version, scope=scope)


def parse_html(
    text: str,
    *,
    doc_id: str,
    site_url: str,
    version: str | None,
    scope: str = "",
    scope_from_nav: bool = True,
) -> list[Section]:
    """Split the HTML page ``text`` into one section per heading and per API entry.

    The page's generator (MkDocs Material, Sphinx themes, Docusaurus, VitePress…) is
    recognised from its markup and only its content container is read; otherwise a
    ``<main>``, ``role=main`` or single ``<article>``. Chrome goes: scripts, forms, ``nav``,
    ``aside``, landmark roles, headers, footers, edit links, breadcrumbs, permalink glyphs.

    A section's anchor is an id the page has: the heading's own ``id``, its permalink's
    target, the ``<section>`` it opens, an empty ``<a id>`` before it; a heading with none
    takes the nearest id before it in the page (an enclosing element's, or an earlier
    one's), else the bare page URL. Sphinx object descriptions (``dt id="pkg.Class.method"``)
    and mkdocstrings object headings are sections of their own at their ids. Text becomes
    light Markdown: paragraphs, lists, fenced code with its language, tables, admonitions as
    ``Note: …``, definition lists, image alt text, links resolved against the page URL.

    Without a ``scope``, ``scope_from_nav`` takes it from the site navigation the page carries
    (see :func:`citewise.parsing.html_themes.nav_scope`).
    """
    from bs4 import BeautifulSoup  # here, not at the top: it adds 0.1 s to every CLI start

    soup = BeautifulSoup(text, "html.parser")
    tags = index_page(soup)
    title_tag = next((t for t, _ in tags if t.name == "title"), None)
    page_title = " ".join(title_tag.get_text().split()) if title_tag else ""
    page_url = file_url(doc_id, site_url, version)
    base = page_url
    base_tag = next((t for t, _ in tags if t.name == "base" and t.get("href")), None)
    if base_tag is not None:
        base = urljoin(base, _attr(base_tag, "href"))
    ids = _ids(tags)
    meta = html_metadata(t for t, _ in tags)
    theme = recognise(tags)
    if not scope and scope_from_nav:
        scope = nav_scope(tags, theme, page_url, site_url)
    root = content_root(soup, tags, theme)
    del tags
    renderer = _Renderer(base, ids, modules=theme.sphinx)
    renderer.render(root)
    sections = assemble_sections(
        renderer.parts,
        kept_anchors=renderer.api_anchors,
        doc_id=doc_id,
        site_url=site_url,
        version=version,
        scope=scope,
        fallback_title=page_title or None,
        slug_missing=False,
    )
    if sections and sections[0].anchor in renderer.api_anchors:
        # The page opens with an API entry, cited at its id: the page itself is cited too.
        title = _TITLE_SUFFIX_RE.split(page_title, maxsplit=1)[0].strip() or sections[0].title
        top = sections[0]
        sections.insert(0, replace(top, title=title, heading_path=(title,), level=1, anchor="",
                                   url=top.url.partition("#")[0], text=""))  # fmt: skip
    return with_metadata(sections, meta)


def page_ids(soup: Tag) -> frozenset[str]:
    """Every fragment the page answers to: element ids and ``<a name>`` targets."""
    from bs4.element import Tag

    return _ids([(t, set()) for t in soup.descendants if isinstance(t, Tag)])


def _ids(tags: Indexed) -> frozenset[str]:
    found = {_attr(tag, "id") for tag, _ in tags}
    found.update(_attr(tag, "name") for tag, _ in tags if tag.name == "a")
    found.discard("")
    return frozenset(found)


def _attr(tag: Tag, name: str) -> str:
    value = tag.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)


def _classes(tag: Tag) -> set[str]:
    return set(_attr(tag, "class").split())


class _Renderer:
    """Walks the content in document order with an explicit stack, cutting it into parts at
    headings and API entries."""

    def __init__(self, base: str, ids: frozenset[str], *, modules: bool = False) -> None:
        self.base = base
        self.ids = ids
        self.modules = modules  # Sphinx: ``module-x`` targets are module entries
        self.pending_module = ""
        self.api_anchors: set[str] = set()
        self.parts: list[Part] = [Part(None)]
        self.inline: list[str] = []
        self.last_id = ""  # the nearest id before the walk's position: anchorless headings
        self.level = 1  # the level of the last prose heading: API entries nest under it
        self.api_depth = 0
        self.prefix = ""  # a label the next block starts with (admonition, definition term)
        self.blocky: set[int] = set()
        self.sectioning: set[int] = set()

    def render(self, root: Tag) -> None:
        self.blocky, self.sectioning = holding(root)
        stack: list[tuple[Iterator[PageElement], Callable[[], None] | None]] = [
            (iter(list(root.children)), None)
        ]
        while stack:
            children, on_exit = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                self._flush()
                if on_exit is not None:
                    on_exit()
                continue
            entered = self._visit(child)
            if entered is not None:
                stack.append(entered)
        self._flush()
        self._emit_prefix()

    def _visit(
        self, child: PageElement
    ) -> tuple[Iterator[PageElement], Callable[[], None] | None] | None:
        """Render ``child``; a container returns its children to walk and what to do after."""
        from bs4.element import NavigableString, Tag

        if isinstance(child, NavigableString):
            self.inline.append(string_text(child))
            return None
        if not isinstance(child, Tag):
            return None
        name = child.name
        own_id = _attr(child, "id")
        if self.modules and own_id.startswith("module-") and own_id in self.ids:
            self._flush()
            self._module_target(child, own_id)
        if name == "a" and own_id:
            target = mkdocstrings_target(child)
            if target is not None:
                self._flush()
                self._start_api(Heading(min(self.level + 1, 6), target.title, target.anchor), ())
                return None
        if name in _INLINE and (name == "br" or id(child) not in self.blocky):
            self.inline.append(self._inline_piece(child))
            return None
        self._flush()
        if name in HEADINGS:
            self._heading(child)
        elif own_id:
            self._seen(own_id)
        if name in HEADINGS:
            return None
        if name == "pre":
            self._emit(fenced(child))
        elif name in ("ul", "ol") and id(child) in self.sectioning:
            return self._sectioning_list(child)
        elif name in ("ul", "ol"):
            self._emit("\n".join(self._list(child)))
        elif name == "table":
            rows = self._table_rows(child)
            if not any(rows):  # a layout table with no rows: its content as blocks
                return iter(list(child.children)), None
            self._emit(markdown_table(rows))
        elif name == "dl" and is_object_description(child):
            return self._object_description(child)
        elif name == "dl":
            return iter(list(child.children)), None
        elif name == "dt":
            self._set_prefix(f"{self._flat(child)}\n: ")
        elif name == "hr":
            pass
        else:
            label = self._admonition_label(child)
            if label:
                self._set_prefix(f"{label}: ")
            return iter(list(child.children)), None
        return None

    # --- headings and API entries --------------------------------------------------------

    def _module_target(self, tag: Tag, anchor: str) -> None:
        """Sphinx's ``.. module::`` target: an entry of its own, as the source parser makes
        one; on a section that opens with its heading, after that heading (whose anchor it
        then is, except for the page title, which is cited by the bare page URL)."""
        from bs4.element import Tag

        first = next(
            (c for c in tag.children if isinstance(c, Tag) and (c.name != "span" or c.get_text())),
            None,
        )
        if first is None and not tag.get_text().strip():
            first = tag.find_next_sibling()  # an empty target: the element it stands before
        if first is not None and first.name in HEADINGS:
            self.pending_module = anchor
            return
        self._start_module(anchor)

    def _start_module(self, anchor: str) -> None:
        name = anchor.removeprefix("module-")
        level = min(self.level + 1, 6)
        self._start(Heading(level, title_for("module", name, name), anchor), ())

    def _sectioning_list(
        self, node: Tag
    ) -> tuple[Iterator[PageElement], Callable[[], None] | None]:
        """A list whose items hold headings (mkdocstrings' parameter headings): walked as
        blocks, each item a ``- `` block, so its headings are sections."""
        from bs4.element import Tag

        items = [c for c in node.children if isinstance(c, Tag) and c.name == "li"]
        return iter(items), None

    def _seen(self, anchor: str) -> None:
        if anchor in self.ids:
            self.last_id = anchor

    def _heading(self, tag: Tag) -> None:
        entry = mkdocstrings_entry(tag, text_of)
        if entry is not None:
            level = int(tag.name[1])
            self._start_api(Heading(level, entry.title, entry.anchor), entry.blocks)
            return
        anchor = own_anchor(tag, self.ids)
        title = " ".join(text_of(tag, is_permalink).split())
        if anchor:
            self.last_id = anchor
        if not title:
            return
        self.level = int(tag.name[1])
        self._start(Heading(self.level, title, anchor or self.last_id or None), ())
        pending, self.pending_module = self.pending_module, ""
        if pending and (self.level <= 1 or anchor != pending):
            self._start_module(pending)

    def _start(self, heading: Heading, blocks: tuple[str, ...]) -> None:
        self._emit_prefix()
        self.parts.append(Part(heading, [b for b in blocks if b.strip()]))

    def _start_api(self, heading: Heading, blocks: tuple[str, ...]) -> None:
        if heading.anchor:
            self.api_anchors.add(heading.anchor)
        self._start(heading, blocks)

    def _object_description(
        self, dl: Tag
    ) -> tuple[Iterator[PageElement], Callable[[], None] | None]:
        entry = sphinx_entry(dl, text_of)
        from bs4.element import Tag

        if entry is None:
            return iter(list(dl.children)), None
        bodies = [c for c in dl.children if isinstance(c, Tag) and c.name == "dd"]
        self.api_depth += 1
        self._seen(entry.anchor)
        level = min(self.level + self.api_depth, 6)
        self._start_api(Heading(level, entry.title, entry.anchor), entry.blocks)

        def leave() -> None:
            self.api_depth -= 1

        return iter(bodies), leave

    # --- blocks --------------------------------------------------------------------------

    def _emit(self, block: str) -> None:
        if not block.strip():
            return
        if self.prefix:
            block = self.prefix + block
            self.prefix = ""
        self.parts[-1].blocks.append(block)

    def _set_prefix(self, prefix: str) -> None:
        self._emit_prefix()
        self.prefix = prefix

    def _emit_prefix(self) -> None:
        if self.prefix.strip(" :\n"):
            self.parts[-1].blocks.append(self.prefix.rstrip(" :\n"))
        self.prefix = ""

    def _flush(self) -> None:
        text = "".join(self.inline)
        self.inline.clear()
        lines = (" ".join(line.split()) for line in text.split("\n"))
        self._emit("\n".join(line for line in lines if line))

    def _admonition_label(self, tag: Tag) -> str:
        """An admonition's label (its title element, removed from the walk), or ``""``."""
        from bs4.element import Tag

        classes = _classes(tag)
        if tag.name != "details" and not classes & _ADMONITION_CLASSES:
            return ""
        for child in tag.children:
            if not isinstance(child, Tag):
                continue
            child_classes = _classes(child)
            if (
                child.name == "summary"
                or child_classes & set(_ADMONITION_TITLES)
                or any(c.startswith("admonitionHeading") for c in child_classes)
            ):
                label = " ".join(child.get_text(" ").split())
                child.extract()
                return label.rstrip(":")
            break
        kind = next((c for c in classes if c not in _ADMONITION_CLASSES), "")
        return kind.capitalize() if tag.name != "details" else ""

    def _inline_piece(self, node: Tag) -> str:
        """An inline element as Markdown text, folded with an explicit stack."""
        from bs4.element import NavigableString, Tag

        def leaf(element: PageElement) -> str | None:
            if isinstance(element, NavigableString):
                return string_text(element)
            if not isinstance(element, Tag):
                return ""
            if element.name == "br":
                return "\n"
            if element.name == "img":
                return image_text(_attr(element, "alt") or _attr(element, "title"))
            if element.name in _CODE:
                return code_span(element.get_text())
            if element.name == "a" and is_glyph_link(element):
                return ""
            return None

        first = leaf(node)
        if first is not None:
            return first
        stack: list[tuple[Tag, Iterator[PageElement], list[str]]] = [
            (node, iter(node.children), [])
        ]
        result = ""
        while stack:
            tag, children, pieces = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                text = "".join(pieces)
                if tag.name == "a":
                    text = self._link(tag, text)
                elif tag.name not in _INLINE:
                    text = f" {text} "  # block content in a cell or list item: words apart
                if stack:
                    stack[-1][2].append(text)
                else:
                    result = text
                continue
            piece = leaf(child)
            if piece is not None:
                pieces.append(piece)
            elif isinstance(child, Tag):
                stack.append((child, iter(child.children), []))
        return result

    def _link(self, node: Tag, text: str) -> str:
        href = _attr(node, "href").strip()
        label = " ".join(text.split())
        if not label or not href or href.lower().startswith(("javascript:", "data:")):
            return text
        return f"[{label}]({urljoin(self.base, href)})"

    def _flat(self, node: Tag) -> str:
        return " ".join(self._inline_piece(node).split())

    def _list(self, node: Tag) -> list[str]:
        """A list as ``- `` lines, nested lists indented, walked with an explicit stack."""
        from bs4.element import Tag

        lines: list[str] = []
        stack: list[tuple[Iterator[Tag], int]] = [(iter(node.find_all("li", recursive=False)), 0)]
        while stack:
            items, depth = stack[-1]
            item = next(items, None)
            if item is None:
                stack.pop()
                continue
            words: list[str] = []
            nested: list[Tag] = []
            for child in item.children:
                if isinstance(child, Tag) and child.name in ("ul", "ol"):
                    nested.append(child)
                else:
                    words.append(self._inline_piece(child) if isinstance(child, Tag)
                                 else string_text(child))  # fmt: skip
            text = " ".join("".join(words).split())
            if text:
                lines.append(f"{'  ' * depth}- {text}")
            for inner in reversed(nested):
                stack.append((iter(inner.find_all("li", recursive=False)), depth + 1))
        return lines

    def _table_rows(self, table: Tag) -> list[list[str]]:
        """The table's own rows (not a nested table's: their text is in the outer cell),
        found among its children and row groups, so no subtree is searched."""
        from bs4.element import Tag

        own: list[Tag] = []
        for child in table.children:
            if not isinstance(child, Tag):
                continue
            if child.name == "tr":
                own.append(child)
            elif child.name in ("thead", "tbody", "tfoot"):
                own.extend(c for c in child.children if isinstance(c, Tag) and c.name == "tr")
        rows: list[list[str]] = []
        for row in own:
            cells: list[str] = []
            for cell in row.children:
                if not isinstance(cell, Tag) or cell.name not in ("th", "td"):
                    continue
                cells.append(self._flat(cell))
                span = _attr(cell, "colspan")
                # Pad spanned columns so later cells stay under their headers.
                cells.extend([""] * (int(span) - 1 if span.isdigit() and int(span) > 1 else 0))
            rows.append(cells)
        return rows
