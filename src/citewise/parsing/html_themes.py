"""Docs-site generators recognised from a built page: their main content, chrome and navigation.

Each theme is known by what its pages carry (a ``<meta name="generator">``, the classes and ids
of its layout); its entry says where the page's content is, which elements inside it are site
chrome (edit links, prev/next, breadcrumbs, in-page TOCs) and where its navigation is. Nothing
here is specific to one site: the selectors are the themes' own markup.
"""

from __future__ import annotations

import functools
import posixpath
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    from bs4 import BeautifulSoup
    from bs4.element import Tag

__all__ = [
    "GENERIC",
    "THEMES",
    "Indexed",
    "Theme",
    "content_root",
    "index_page",
    "nav_scope",
    "recognise",
]

_HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
# Never content: code, media and interactive chrome.
_DROPPED = frozenset({"script", "style", "noscript", "template", "iframe", "object", "embed", "svg",
            "canvas", "form", "button", "select", "input", "textarea", "nav", "aside", "head",
            "dialog"})  # fmt: skip
_BOILERPLATE_ROLES = ("navigation", "banner", "contentinfo", "search", "complementary")
# Chrome every theme puts inside or beside its content (class names the generators share).
_COMMON_CHROME = (
    "a[rel=edit]", ".edit-this-page",
    ".editthispage", ".view-this-page", ".edit-link", ".breadcrumbs", ".breadcrumb",
    "[aria-label=breadcrumbs]", ".skip-link", ".visually-hidden", ".sr-only",
)  # fmt: skip


@dataclass(frozen=True)
class Theme:
    """A generator's layout: how to know it, its content container, chrome and navigation.

    ``generator`` matches the ``<meta name="generator">`` content (lower case, a prefix);
    ``markers`` are selectors only its pages match. ``content`` selectors are tried in order,
    the first match is the page's content. ``nav`` finds the site navigation (scopes).
    """

    name: str
    generator: tuple[str, ...]
    markers: tuple[str, ...]
    content: tuple[str, ...]
    chrome: tuple[str, ...] = ()
    nav: tuple[str, ...] = ()
    sphinx: bool = False  # built by Sphinx: its object and module targets are API entries
    nav_item: str = "li"  # what one entry of its navigation tree is


THEMES: tuple[Theme, ...] = (
    Theme(
        "mkdocs-material",
        ("mkdocs-material", "zensical"),
        ("article.md-content__inner", ".md-container"),
        ("article.md-content__inner", ".md-content"),
        (
            ".md-content__button",
            ".md-source-file",
            ".md-feedback",
            ".md-top",
            ".md-path",
            ".md-sidebar",
            ".md-nav",
            ".md-footer",
            ".md-dialog",
        ),  # fmt: skip
        ("nav.md-nav--primary", ".md-sidebar--primary .md-nav"),
    ),
    Theme(
        "furo",
        ("furo",),
        (".sidebar-drawer", "#furo-main-content"),
        ("article[role=main]", "#furo-main-content"),
        (
            ".toc-drawer",
            ".related-pages",
            ".bottom-of-page",
            ".content-icon-container",
            ".theme-toggle-container",
            ".page-info",
        ),  # fmt: skip
        (".sidebar-tree",),
        sphinx=True,
    ),
    Theme(
        "pydata-sphinx-theme",
        ("pydata-sphinx-theme", "sphinx-book-theme"),
        (".bd-sidebar-primary", ".bd-article"),
        ("article.bd-article", "main#main-content", ".bd-content"),
        (
            ".bd-sidebar-secondary",
            ".prev-next-area",
            ".prev-next-footer",
            ".header-article",
            ".bd-footer-article",
            ".bd-header-article",
            ".bd-toc",
        ),  # fmt: skip
        (".bd-sidebar-primary .bd-links", "nav.bd-docs-nav", ".bd-sidebar-primary"),
        sphinx=True,
    ),
    Theme(
        "sphinx-rtd-theme",
        ("sphinx_rtd_theme", "sphinx-rtd-theme"),
        (".wy-nav-side", ".wy-nav-content"),
        ("div[itemprop=articleBody]", "div[role=main]", ".wy-nav-content"),
        (".rst-footer-buttons", ".wy-breadcrumbs", ".rst-versions"),
        (".wy-menu-vertical",),
        sphinx=True,
    ),
    Theme(
        "docusaurus",
        ("docusaurus",),
        (".theme-doc-markdown", "#__docusaurus", ".docusaurus-mt-lg"),
        (".theme-doc-markdown", "article .markdown", "article"),
        (
            ".theme-doc-footer",
            ".pagination-nav",
            ".theme-doc-toc-mobile",
            ".theme-doc-breadcrumbs",
            ".theme-doc-version-badge",
            ".theme-edit-this-page",
            ".theme-last-updated",
        ),  # fmt: skip
        (".theme-doc-sidebar-menu", "nav.menu"),
    ),
    Theme(
        "vitepress",
        ("vitepress",),
        (".vp-doc", "#VPContent"),
        (".vp-doc", "main"),
        (
            ".VPDocFooter",
            ".edit-info",
            ".prev-next",
            ".VPDocAside",
            ".VPDocOutlineDropdown",
            "span.lang",
        ),
        ("#VPSidebarNav", ".VPSidebar nav", ".VPSidebar"),
        nav_item=".VPSidebarItem",
    ),
    Theme(
        # alabaster, the pallets theme, classic, nature, sphinxdoc: Sphinx's basic layout.
        "sphinx-basic",
        ("sphinx",),
        ("div.sphinxsidebar", "div.documentwrapper", "div.bodywrapper"),
        ("div.body[role=main]", "div.body", "div[role=main]"),
        ("div.sphinxsidebar", "div.related", "div.footer"),
        ("div.sphinxsidebar",),
        sphinx=True,
    ),
    Theme(
        "mkdocs",
        ("mkdocs",),
        ("div.col-md-9[role=main]",),
        ("div[role=main]", "main"),
        (".bs-sidebar",),
        (".bs-sidebar", "nav.navbar"),
    ),
)
# A page no theme claims: the page's own landmarks decide (see content_root).
GENERIC = Theme("generic", (), (), ())


# Every element of a page in document order with its classes: one walk serves every lookup.
Indexed = list[tuple["Tag", set[str]]]


def index_page(soup: BeautifulSoup) -> Indexed:
    """The page's elements in document order, each with its class set."""
    from bs4.element import Tag

    return [(t, set(_attr(t, "class").split())) for t in soup.descendants if isinstance(t, Tag)]


def recognise(tags: Indexed) -> Theme:
    """The theme that built the page: by its layout markers, then by its generator meta tag."""
    meta = next((t for t, _ in tags if t.name == "meta" and _attr(t, "name") == "generator"), None)
    generator = _attr(meta, "content").lower() if meta is not None else ""
    found = select_all(tags, [m for theme in THEMES for m in theme.markers], first=True)
    for theme in THEMES:
        if any(found.get(marker) for marker in theme.markers):
            return theme
    for theme in THEMES:
        if generator and any(word in generator for word in theme.generator):
            return theme
    return GENERIC


def content_root(soup: BeautifulSoup, tags: Indexed, theme: Theme) -> Tag:
    """Strip chrome from ``soup`` and return the element that holds the page's content.

    The theme's content container when it has one on this page; otherwise a ``<main>``,
    ``role=main`` or a single ``<article>``, else the body. Scripts, forms, ``nav``, ``aside``,
    landmark roles, hidden elements and the theme's chrome go first.
    """
    chrome = (*_COMMON_CHROME, *theme.chrome)
    found = select_all(tags, [*theme.content, *chrome])
    chosen = next((found[s][0] for s in theme.content if found.get(s)), None)
    doomed = [tag for selector in chrome for tag in found.get(selector, ())]
    for tag, _ in tags:
        if (
            tag.name in _DROPPED
            or tag.get("hidden") is not None
            or _attr(tag, "role").lower() in _BOILERPLATE_ROLES
        ):
            doomed.append(tag)
    for tag in doomed:
        if not _gone(tag) and tag is not chosen:
            tag.decompose()
    live = [tag for tag, _ in tags if not _gone(tag)]
    root = chosen
    if root is None or _gone(root):
        articles = [tag for tag in live if tag.name == "article"]
        root = (
            next((tag for tag in live if tag.name == "main"), None)
            or next((tag for tag in live if _attr(tag, "role") == "main"), None)
            or (articles[0] if len(articles) == 1 else None)
        )
    landmark = root is not None
    root = root or next((tag for tag in live if tag.name == "body"), None) or soup
    inside = root is soup or root.name == "body"
    for tag in live:
        if tag.name not in ("header", "footer") or _gone(tag):
            continue
        if not inside and not _within(tag, root):
            continue
        # An article's own header holds its title; a page header is site chrome.
        if tag.name == "footer" or not landmark or tag.find(_HEADINGS) is None:
            tag.decompose()
    return root


def _gone(tag: Tag) -> bool:
    """Whether ``tag`` was decomposed. Not ``tag.decomposed``: that reads a missing attribute
    through ``Tag.__getattr__``, which searches the whole subtree (quadratic on deep pages)."""
    return bool(vars(tag).get("_decomposed", False))


def _within(tag: Tag, root: Tag) -> bool:
    node = tag.parent
    while node is not None:
        if node is root:
            return True
        node = node.parent
    return False


# --- the selectors: one pass over the page for all of them -----------------------------------

_COMPOUND_RE = re.compile(
    r"^(?P<tag>[a-zA-Z][a-zA-Z0-9]*)?(?P<rest>(?:[.#][\w-]+|\[[\w-]+(?:=[\w-]+)?\])*)$"
)
_PART_RE = re.compile(r"([.#])([\w-]+)|\[([\w-]+)(?:=([\w-]+))?\]")


@dataclass(frozen=True)
class _Compound:
    tag: str
    classes: frozenset[str]
    ident: str
    attrs: tuple[tuple[str, str | None], ...]

    def matches(self, tag: Tag, classes: set[str]) -> bool:
        if self.tag and tag.name != self.tag:
            return False
        if self.classes and not self.classes <= classes:
            return False
        if self.ident and _attr(tag, "id") != self.ident:
            return False
        for name, value in self.attrs:
            if tag.get(name) is None or (value is not None and _attr(tag, name) != value):
                return False
        return True


@functools.cache
def _compile(selector: str) -> tuple[_Compound, ...]:
    """A selector of compounds (``tag.class#id[attr=value]``) joined by descendant spaces:
    the subset of CSS the theme table uses, matched without soupsieve's per-call cost."""
    compounds = []
    for text in selector.split():
        match = _COMPOUND_RE.match(text)
        if match is None:
            raise ValueError(f"unsupported selector {selector!r}")
        classes, ident, attrs = set(), "", []
        for dot, name, attr, value in _PART_RE.findall(match["rest"]):
            if dot == ".":
                classes.add(name)
            elif dot == "#":
                ident = name
            else:
                attrs.append((attr, value or None))
        compounds.append(_Compound(match["tag"] or "", frozenset(classes), ident, tuple(attrs)))
    return tuple(compounds)


def select_all(tags: Indexed, selectors: list[str], *, first: bool = False) -> dict[str, list[Tag]]:
    """The elements each selector matches, in document order (only the first with ``first``),
    found in one walk of the page."""
    compiled = [(s, _compile(s)) for s in dict.fromkeys(selectors)]
    found: dict[str, list[Tag]] = {}
    for tag, classes in tags:
        for selector, compounds in compiled:
            if first and selector in found:
                continue
            if not compounds[-1].matches(tag, classes):
                continue
            if len(compounds) > 1 and not _has_ancestors(tag, compounds[:-1]):
                continue
            found.setdefault(selector, []).append(tag)
    return found


def _has_ancestors(tag: Tag, compounds: tuple[_Compound, ...]) -> bool:
    wanted = len(compounds) - 1
    node = tag.parent
    while node is not None and wanted >= 0:
        if compounds[wanted].matches(node, set(_attr(node, "class").split())):
            wanted -= 1
        node = node.parent
    return wanted < 0


# --- scopes from the navigation -----------------------------------------------------------------

_CURRENT_CLASSES = frozenset(
    {
        "current",
        "current-page",
        "active",
        "is-active",
        "md-nav__link--active",
        "menu__link--active",
        "md-nav__item--active",
    }  # fmt: skip
)
_MAIN_SCOPE = "library"


def nav_scope(tags: Indexed, theme: Theme, page_url: str, site_url: str) -> str:
    """The page's scope from the site navigation the page carries, ``""`` without one.

    The page's entry in the navigation (its link, or the entry the theme marks current) sits
    under a top-level entry: when that entry is a section (it holds a list of pages), the
    scope is named after the one top-level folder all its pages share, else a slug of its
    label, and the page is also in the main scope (``library``), as with a site config's nav
    (``citewise.sources.nav``); a top-level page is in the main scope only.
    """
    found = select_all(tags, list(theme.nav), first=True)
    nav = next((found[s][0] for s in theme.nav if found.get(s)), None)
    if nav is None:
        return ""
    current = _current_link(nav, page_url)
    if current is None:
        return ""
    top = _top_entry(nav, current, _compile(theme.nav_item)[-1])
    if top is None:
        return _MAIN_SCOPE
    pages = [
        _site_path(urljoin(page_url, _attr(link, "href")), site_url)
        for link in top.find_all("a", href=True)
    ]
    if len(pages) < 2:
        return _MAIN_SCOPE
    folder = _common_folder([p for p in pages if p is not None])
    label = _label(top)
    name = _slug(folder or label)
    return f"{name} {_MAIN_SCOPE}" if name and name != _MAIN_SCOPE else _MAIN_SCOPE


def _same_page(url: str) -> str:
    """A page URL in one form: no fragment, no ``index.html``, no ``.html`` (clean URLs)."""
    url = url.split("#", 1)[0].split("?", 1)[0]
    url = url.removesuffix("index.html").removesuffix(".html")
    return url.rstrip("/")


def _current_link(nav: Tag, page_url: str) -> Tag | None:
    page = _same_page(page_url)
    marked: Tag | None = None
    for link in nav.find_all("a", href=True):
        href = _attr(link, "href")
        if not href.startswith("#") and _same_page(urljoin(page_url, href)) == page:
            return link
        if marked is None:
            classes = set(_attr(link, "class").split())
            node, hops = link.parent, 0
            while node is not None and hops < 3:  # the item marks it (li.current, .is-active)
                classes |= set(_attr(node, "class").split())
                node, hops = node.parent, hops + 1
            if classes & _CURRENT_CLASSES and link.get("aria-current") != "false":
                marked = link
    return marked


def _top_entry(nav: Tag, link: Tag, item: _Compound) -> Tag | None:
    """The top-level entry holding ``link`` when it is a section (holds other pages)."""
    items: list[Tag] = []
    node = link.parent
    while node is not None and node is not nav:
        if item.matches(node, set(_attr(node, "class").split())):
            items.append(node)
        node = node.parent
    if not items:
        return None
    top = items[-1]
    # A section holds other pages; a page whose entry lists its own headings is no section.
    hrefs = [_attr(a, "href") for a in top.find_all("a", href=True)]
    pages = {_same_page(urljoin("http://x/", h)) for h in hrefs if not h.startswith("#")}
    return top if len(pages) > 1 else None


def _label(item: Tag) -> str:
    """A nav entry's own label: its first link or label text, not its children's."""
    from bs4.element import Tag

    for child in item.children:
        if isinstance(child, Tag) and child.name not in ("ul", "ol", "nav"):
            text = " ".join(child.get_text(" ").split())
            if text:
                return text
    return ""


def _site_path(url: str, site_url: str) -> str | None:
    base = urlsplit(site_url)
    target = urlsplit(url)
    if (target.scheme, target.netloc) != (base.scheme, base.netloc):
        return None
    root = base.path if base.path.endswith("/") else posixpath.dirname(base.path) + "/"
    if not target.path.startswith(root):
        return None
    return target.path[len(root) :]


def _common_folder(pages: list[str]) -> str:
    heads = {p.split("/", 1)[0] if "/" in p else "" for p in pages}
    return heads.pop() if len(heads) == 1 else ""


def _slug(value: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9_]+", "-", ascii_text.lower()).strip("-")


def _attr(tag: Tag | None, name: str) -> str:
    if tag is None:
        return ""
    value = tag.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)
