"""Split a reStructuredText page into sections at the ids a Sphinx site gives them.

docutils parses the page as Sphinx does (no doc-title promotion), so each section's id is
docutils' ``make_id`` of its title, numbered when taken, or an explicit ``.. _label:`` target's.
Pages are served Read the Docs' way (``dirhtml``): ``user/quickstart.rst`` at
``{site}{version}/user/quickstart/``. Sphinx's own directives are understood: ``code-block``
stays fenced code, ``toctree`` lists its pages, and ``autoclass``/``autofunction``/
``automodule`` become API directives (``::: requests.Session``) that
:class:`citewise.parsing.mkdocstrings.ApiReference` expands from the source.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from citewise.models import Section
from citewise.parsing.common import Heading, Part, assemble_sections
from citewise.parsing.layout import SPHINX_LAYOUT, SiteLayout
from citewise.parsing.markdown import site_base
from citewise.parsing.sphinx_api import (
    AUTODOC,
    PY_OBJECTS,
    AnyOptions,
    add_node,
    api_marker,
    marker_directive,
    py_object_directive,
)

__all__ = ["RstParser", "doctree_sections", "parse_rst", "rst_page_path", "sphinx_namespace"]

_DIRECTIVE_NAME_RE = re.compile(r"^\s*\.\. +([\w:.+-]+)::", re.MULTILINE)
# MyST's directive fences: ```{name} and :::{name} (colon fences).
_MYST_DIRECTIVE_RE = re.compile(r"^\s*(?:`{3,}|~{3,}|:{3,})\s*\{([\w:.+-]+)\}", re.MULTILINE)
_AUTO_ID_RE = re.compile(r"^id\d+$")
_ROLE_NAME_RE = re.compile(r"(?<![\w`]):([\w:.+-]+):`")
_MYST_ROLE_RE = re.compile(r"\{([\w:.+-]+)\}`")
_ROLE_TARGET_RE = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]*)>$", re.DOTALL)
# Directives whose content is body text, shown after a label (``Note:``).
_LABELLED = {"versionadded": "New in version", "versionchanged": "Changed in version",
             "deprecated": "Deprecated since version", "seealso": "See also"}  # fmt: skip
_SILENT = {"toctree", "index", "highlight", "tabularcolumns", "module", "currentmodule",
           "py:module", "py:currentmodule", "automodapi", "autosummary", "literalinclude",
           "include"}  # fmt: skip
# docutils keeps its directive and role tables in module globals: swap ours in under a lock.
_LOCK = threading.Lock()


def rst_page_path(doc_id: str, layout: SiteLayout | None = None) -> str:
    """The page's path as the site serves it: ``a/b.rst`` → ``a/b/`` (Read the Docs'
    ``dirhtml``, without ``layout``) or ``a/b.html`` (``html``); ``index`` → ``""``."""
    return (layout or SPHINX_LAYOUT).page_path(doc_id, (".rst", ".md", ".txt"))


class RstParser:
    """reStructuredText as Sphinx publishes it (see :func:`parse_rst`)."""

    site_layout = True

    def parse(
        self,
        text: str,
        *,
        doc_id: str,
        site_url: str,
        version: str | None,
        scope: str = "",
        layout: SiteLayout | None = None,
    ) -> list[Section]:
        return parse_rst(
            text, doc_id=doc_id, site_url=site_url, version=version, scope=scope, layout=layout
        )


def parse_rst(
    text: str,
    *,
    doc_id: str,
    site_url: str,
    version: str | None,
    scope: str = "",
    layout: SiteLayout | None = None,
) -> list[Section]:
    """Split ``text`` (the source of ``doc_id``) into sections, one per title.

    The page's first title is its bare URL; the others are at their Sphinx ids.
    """
    with sphinx_namespace(text):
        document = _doctree(text, doc_id)
    return doctree_sections(
        document, doc_id=doc_id, site_url=site_url, version=version, scope=scope, layout=layout
    )


def doctree_sections(
    document: Any,
    *,
    doc_id: str,
    site_url: str,
    version: str | None,
    scope: str = "",
    layout: SiteLayout | None = None,
) -> list[Section]:
    """The sections of a docutils document (from reStructuredText or MyST) at its ids."""
    from docutils import nodes

    parts: list[Part] = [Part(None)]
    state = {"module": ""}

    def walk_section(section: Any, level: int) -> None:
        title = section[0].astext() if section.children else ""
        # The section's own id comes first, unless a label took it (``.. _proxies:`` over
        # "Proxies"): then docutils numbers it (``id5``) and Sphinx shows the label first.
        ids = list(section.get("ids", []))
        named = [i for i in ids if not _AUTO_ID_RE.match(i)]
        anchor = (named or ids or [None])[0]
        parts.append(Part(Heading(level, " ".join(title.split()), anchor)))
        for child in section.children[1:]:
            if isinstance(child, nodes.section):
                walk_section(child, level + 1)
            else:
                add_node(parts, child, state, level, _blocks)

    for child in document.children:
        if isinstance(child, nodes.section):
            walk_section(child, 1)
        else:
            add_node(parts, child, state, 0, _blocks)
    sections = assemble_sections(
        parts, doc_id=doc_id, site_url=site_url, version=version, scope=scope
    )
    page = rst_page_path(doc_id, layout)
    url = site_base(site_url, version) + page
    return [replace(s, page=page, url=f"{url}#{s.anchor}" if s.anchor else url) for s in sections]


# --- docutils ---------------------------------------------------------------------------------


def _doctree(text: str, doc_id: str) -> Any:
    from docutils.core import publish_doctree

    return publish_doctree(
        text, source_path=doc_id, settings_overrides=dict(SPHINX_DOCUTILS_SETTINGS)
    )


# docutils settings for a page as Sphinx reads it (MyST adds its own on top).
SPHINX_DOCUTILS_SETTINGS: dict[str, Any] = {
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": False,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "doctitle_xform": False,  # as Sphinx: the first title stays a section
    "sectsubtitle_xform": False,
    "input_encoding": "unicode",
    "syntax_highlight": "none",
    "auto_id_prefix": "id",  # as Sphinx: a taken id becomes id1, id2…
}


@contextmanager
def sphinx_namespace(text: str) -> Iterator[None]:
    """docutils with Sphinx's directives and roles, for this page's names only (written
    ``.. name::`` in reStructuredText, ```` ```{name} ```` in MyST)."""
    from docutils.parsers.rst import directives, roles

    with _LOCK:
        saved_directives = dict(directives._directives)
        saved_roles = dict(roles._roles)
        try:
            known = set(directives._directive_registry)
            names = set(_DIRECTIVE_NAME_RE.findall(text)) | set(_MYST_DIRECTIVE_RE.findall(text))
            names -= {"eval-rst", "include"}  # MyST's own
            for name in names:
                short = name.split(":", 1)[1] if name.startswith(("py:", "rst:")) else name
                if name in ("code-block", "sourcecode"):
                    directives._directives[name] = _code_directive()
                elif short in AUTODOC or short in ("module", "currentmodule"):
                    directives._directives[name] = marker_directive(short)
                elif short in PY_OBJECTS and (name == short or name.startswith("py:")):
                    directives._directives[name] = py_object_directive(short)
                elif name not in known:
                    directives._directives[name] = _generic_directive(name)
            for name in set(_ROLE_NAME_RE.findall(text)) | set(_MYST_ROLE_RE.findall(text)):
                if name not in roles._role_registry:
                    roles._roles[name] = _generic_role
            yield
        finally:
            directives._directives.clear()
            directives._directives.update(saved_directives)
            roles._roles.clear()
            roles._roles.update(saved_roles)


def _generic_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Any,
    options: dict[str, Any] | None = None, content: list[str] | None = None,
) -> tuple[list[Any], list[Any]]:  # fmt: skip
    """Sphinx cross-reference roles (``:class:`~a.B```, ``:ref:`text <label>```) as their text."""
    from docutils import nodes

    match = _ROLE_TARGET_RE.match(text)
    shown = match["text"] if match else text.lstrip("~!")
    if not match and text.startswith("~"):
        shown = shown.rsplit(".", 1)[-1]
    if name in ("ref", "doc", "term", "std:ref", "std:doc"):
        return [nodes.Text(shown)], []
    return [nodes.literal(rawtext, shown)], []


def _code_directive() -> type:
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives

    class CodeBlock(Directive):  # type: ignore[misc]
        optional_arguments = 1
        has_content = True
        option_spec = {"linenos": directives.flag, "emphasize-lines": directives.unchanged,
                       "caption": directives.unchanged, "name": directives.unchanged,
                       "dedent": directives.unchanged, "force": directives.flag,
                       "lineno-start": directives.unchanged}  # fmt: skip

        def run(self) -> list[Any]:
            code = "\n".join(self.content)
            node = nodes.literal_block(code, code)
            node["language"] = self.arguments[0] if self.arguments else ""
            return [node]

    return CodeBlock


def _generic_directive(name: str) -> type:
    """Any other Sphinx directive: its arguments and content kept as body text."""
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class Generic(Directive):  # type: ignore[misc]
        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True

        def run(self) -> list[Any]:
            if name in _SILENT:
                if name == "toctree":
                    node = nodes.container()
                    node["citewise_toctree"] = [ln.strip() for ln in self.content if ln.strip()]
                    return [node]
                return []
            container = nodes.container()
            label = _LABELLED.get(name)
            argument = self.arguments[0] if self.arguments else ""
            if label:
                # `.. versionadded:: 2.1 Text` or with the text on the next lines.
                version, _, rest = argument.partition(" ") if "\n" not in argument else \
                    argument.partition("\n")  # fmt: skip
                shown = f"{label} {version}".strip() + ":" + (" " if rest else "")
                inline, _messages = self.state.inline_text(" ".join(rest.split()), self.lineno)
                container += nodes.paragraph("", shown, *inline)
            elif argument and name != "only":  # `only`'s argument is a builder condition
                container += nodes.paragraph(argument, argument)
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, container)
            return [container]

    Generic.option_spec = AnyOptions()
    return Generic


# --- doctree → Markdown blocks ------------------------------------------------------------


def _blocks(node: Any, state: dict[str, str], level: int) -> list[str]:
    from docutils import nodes

    if isinstance(node, nodes.container) and "citewise_api" in node:
        return api_marker(node, state, level)
    if isinstance(node, nodes.container) and "citewise_toctree" in node:
        return []
    if isinstance(node, nodes.Invisible | nodes.system_message | nodes.raw):
        return []
    if isinstance(node, nodes.paragraph | nodes.rubric | nodes.line_block):
        text = _inline(node)
        return [text] if text.strip() else []
    if isinstance(node, nodes.literal_block | nodes.doctest_block):
        language = node.get("language", "") or ("pycon" if node.astext().startswith(">>>") else "")
        return [f"```{language}\n{node.astext()}\n```"]
    if isinstance(node, nodes.bullet_list | nodes.enumerated_list):
        numbered = isinstance(node, nodes.enumerated_list)
        out = []
        for index, item in enumerate(node.children, start=1):
            body = "\n\n".join(b for c in item.children for b in _blocks(c, state, level))
            marker = f"{index}." if numbered else "-"
            out.append(f"{marker} " + body.replace("\n", "\n  "))
        return ["\n".join(out)] if out else []
    if isinstance(node, nodes.definition_list):
        out = []
        for item in node.children:
            term = " ".join(_inline(c) for c in item.children if isinstance(c, nodes.term))
            defs = [b for c in item.children if isinstance(c, nodes.definition)
                    for g in c.children for b in _blocks(g, state, level)]  # fmt: skip
            out.append(f"{term}\n: " + "\n\n".join(defs).replace("\n", "\n  "))
        return out
    if isinstance(node, nodes.field_list):
        out = []
        for field in node.children:
            name = _inline(field[0])
            body = " ".join(b for c in field[1].children for b in _blocks(c, state, level))
            out.append(f"{name}: {body}")
        return ["\n".join(out)] if out else []
    if isinstance(node, nodes.table):
        return [_table(node)]
    if isinstance(node, nodes.Admonition):
        label = node.tagname.capitalize() if node.tagname != "admonition" else ""
        inner = [b for c in node.children for b in _blocks(c, state, level)]
        if isinstance(node, nodes.admonition) and node.children:
            label = _inline(node[0])
            inner = inner[1:]
        return [f"{label}: " + "\n\n".join(inner) if label else "\n\n".join(inner)]
    if isinstance(node, nodes.title):
        return [f"**{_inline(node)}**"]
    if isinstance(node, nodes.Element):
        return [b for c in node.children for b in _blocks(c, state, level)]
    text = node.astext().strip()
    return [text] if text else []


def _inline(node: Any) -> str:
    from docutils import nodes

    pieces: list[str] = []
    for child in node.children if isinstance(node, nodes.Element) else [node]:
        if isinstance(child, nodes.literal):
            pieces.append(f"`{child.astext()}`")
        elif isinstance(child, nodes.strong):
            pieces.append(f"**{child.astext()}**")
        elif isinstance(child, nodes.emphasis):
            pieces.append(f"*{child.astext()}*")
        elif isinstance(child, nodes.reference) and child.get("refuri", "").startswith("http"):
            text = child.astext()
            uri = child["refuri"]
            pieces.append(uri if text == uri else f"[{text}]({uri})")
        elif isinstance(child, nodes.system_message | nodes.Invisible):
            continue
        elif isinstance(child, nodes.line):
            pieces.append(_inline(child) + "\n")
        elif isinstance(child, nodes.Element):
            pieces.append(_inline(child))
        else:
            pieces.append(child.astext())
    return "".join(pieces).strip()


def _table(node: Any) -> str:
    from docutils import nodes

    from citewise.parsing.common import markdown_table

    rows = [[_inline(entry) or entry.astext() for entry in row.children]
            for row in node.findall(nodes.row)]  # fmt: skip
    return markdown_table(rows)
