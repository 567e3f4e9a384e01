"""Split a MyST Markdown page of a Sphinx site into sections at the ids Sphinx gives them.

The page is parsed by MyST's own docutils parser (``myst-docutils``: myst-parser's code without
Sphinx), so its sections get docutils' ids as in a Sphinx build: ``make_id`` of the title,
numbered when taken, or the ``(label)=`` target's. The doctree is then read like a
reStructuredText page's (:func:`citewise.parsing.rst.doctree_sections`): Sphinx's directives
(```` ```{autoclass} ````, ```` ```{eval-rst} ```` blocks…) mean what they mean there.
"""

from __future__ import annotations

import warnings
from typing import Any

from citewise.models import Section
from citewise.parsing.layout import SiteLayout
from citewise.parsing.rst import SPHINX_DOCUTILS_SETTINGS, doctree_sections, sphinx_namespace

__all__ = ["parse_myst"]


def parse_myst(
    text: str,
    *,
    doc_id: str,
    site_url: str,
    version: str | None,
    scope: str = "",
    layout: SiteLayout | None = None,
) -> list[Section]:
    """Split ``text`` (the MyST source of ``doc_id``) into sections, one per heading.

    The page's first heading is its bare URL; the others are at their Sphinx ids. The MyST
    syntax extensions the site enables (``myst_enable_extensions``) come with ``layout``.
    """
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    settings: dict[str, Any] = dict(SPHINX_DOCUTILS_SETTINGS)
    extensions = _known_extensions(layout.myst_extensions if layout is not None else ())
    if extensions:
        settings["myst_enable_extensions"] = extensions
    with sphinx_namespace(text), warnings.catch_warnings():
        # MyST still calls docutils' traverse(), which warns on every page.
        warnings.simplefilter("ignore", DeprecationWarning)
        document = publish_doctree(
            text, source_path=doc_id, parser=Parser(), settings_overrides=settings
        )
    return doctree_sections(
        document, doc_id=doc_id, site_url=site_url, version=version, scope=scope, layout=layout
    )


def _known_extensions(names: tuple[str, ...]) -> set[str]:
    """The syntax extensions this MyST knows (one it does not know would void them all)."""
    if not names:
        return set()
    from myst_parser.config.main import MdParserConfig

    known: set[str] = set()
    for name in names:
        try:
            MdParserConfig(enable_extensions={name})
        except (TypeError, ValueError):
            continue
        known.add(name)
    return known
