"""The URL shape of a docs site's pages (``a/b/`` or ``a/b.html``), as its generator writes them.

A :class:`SiteLayout` is detected once per docs folder from the site's own configuration (see
:func:`citewise.sources.layout.detect_layout`) and handed to the parsers, so a section's URL
and the links rewritten inside its text take the form the published site serves.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, replace

from citewise.errors import ConfigurationError

__all__ = ["MKDOCS_LAYOUT", "PAGE_FORMS", "SPHINX_LAYOUT", "SiteLayout"]

# The page forms a user can name (``--page-form``): a folder per page, or one file per page.
PAGE_FORMS = ("dirhtml", "html")
_GENERATORS = ("mkdocs", "sphinx")


@dataclass(frozen=True)
class SiteLayout:
    """How a site's generator turns a source path into a page path.

    Args:
        generator: ``"mkdocs"`` (also Zensical) or ``"sphinx"``. It decides which Markdown is
            read (Python-Markdown or MyST) and which names stand for a folder's index page.
        directory_urls: ``a/b.md`` is served at ``a/b/`` (MkDocs' ``use_directory_urls``,
            Sphinx's ``dirhtml`` builder); else at ``a/b{suffix}``.
        suffix: the file suffix of pages when not ``directory_urls`` (``html_file_suffix``).
        detected_from: where the form was read (``"mkdocs.yml"``, ``".readthedocs.yaml"``,
            ``"given"``…); ``"default"`` when nothing said, so a caller may check it.
        myst_extensions: a Sphinx site's MyST syntax extensions (``myst_enable_extensions``:
            ``colon_fence``, ``attrs_block``…); not part of :meth:`to_meta`.
        markdown_extensions: an MkDocs site's Markdown extensions that change headings
            (``pymdownx.emoji``: ``:warning:`` is an icon, not text); not part of the meta.
    """

    generator: str = "mkdocs"
    directory_urls: bool = True
    suffix: str = ".html"
    detected_from: str = "default"
    myst_extensions: tuple[str, ...] = ()
    markdown_extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.generator not in _GENERATORS:
            raise ConfigurationError(f"unknown site generator {self.generator!r}")
        if not self.suffix.startswith(".") or "/" in self.suffix:
            raise ConfigurationError(f"invalid page suffix {self.suffix!r}: use e.g. .html")

    @property
    def page_form(self) -> str:
        """``"dirhtml"`` (a folder per page) or ``"html"`` (a file per page)."""
        return "dirhtml" if self.directory_urls else "html"

    def with_page_form(self, page_form: str | None) -> SiteLayout:
        """This layout with the page form a user gave (``dirhtml`` or ``html``); unchanged
        for None."""
        if page_form is None:
            return self
        if page_form not in PAGE_FORMS:
            raise ConfigurationError(
                f"unknown page form {page_form!r}: use {' or '.join(PAGE_FORMS)}"
            )
        return replace(self, directory_urls=page_form == "dirhtml", detected_from="given")

    def page_path(self, doc_id: str, source_suffixes: tuple[str, ...]) -> str:
        """The page's path under the site root for the source ``doc_id``.

        ``a/b.md`` → ``a/b/`` (or ``a/b.html``); a folder's index page → ``a/`` (or
        ``a/index.html``). The root page is ``""`` (the site URL itself), but ``index.html``
        for MkDocs without directory URLs, as its pages link it. MkDocs also takes a
        ``README`` as a folder's index page.
        """
        path = doc_id.replace("\\", "/").lstrip("/")
        while path.startswith("./"):
            path = path[2:]
        folder, name = posixpath.split(path)
        stem = name
        for suffix in source_suffixes:
            if name.lower().endswith(suffix):
                stem = name[: -len(suffix)]
                break
        if stem == "README" and self.generator == "mkdocs":
            stem = "index"
        if stem == "index":
            if self.directory_urls:
                return f"{folder}/" if folder else ""
            if not folder and self.generator == "sphinx":
                return ""  # the site's root URL, as Read the Docs links it
            return f"{folder}/index{self.suffix}" if folder else f"index{self.suffix}"
        page = f"{folder}/{stem}" if folder else stem
        return f"{page}/" if self.directory_urls else f"{page}{self.suffix}"

    def to_meta(self) -> str:
        """A short string for a knowledge base's meta: ``sphinx html``, ``mkdocs dirhtml``
        (``sphinx html .htm`` with another suffix)."""
        words = [self.generator, self.page_form]
        if self.suffix != ".html":
            words.append(self.suffix)
        return " ".join(words)

    @classmethod
    def from_meta(cls, text: str) -> SiteLayout:
        """The layout :meth:`to_meta` wrote."""
        words = text.split()
        if len(words) not in (2, 3) or words[1] not in PAGE_FORMS:
            raise ConfigurationError(f"invalid site layout {text!r}: e.g. 'sphinx html'")
        suffix = words[2] if len(words) == 3 else ".html"
        return cls(words[0], words[1] == "dirhtml", suffix, "meta")


MKDOCS_LAYOUT = SiteLayout("mkdocs")
# What a reStructuredText page parsed on its own (no folder to detect from) is served as: the
# form citewise always gave them (Read the Docs' ``dirhtml``). A folder's own config decides
# otherwise (Sphinx's default builder is ``html``).
SPHINX_LAYOUT = SiteLayout("sphinx", directory_urls=True)
