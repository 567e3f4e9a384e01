"""Included content as the site renders it: the included file's text put in place of the include.

reStructuredText ``.. include::`` and ``.. literalinclude::`` (Sphinx), MyST ```` ```{include} ````
and ```` ```{literalinclude} ````, and pymdownx.snippets ``--8<-- "file"`` are expanded before
the page is parsed, with their options (start/end markers, line ranges, snippet sections).
Includes are resolved safely: never a file outside the project root (links resolved first),
never a file over the size limit, at most a few levels deep; a missing or refused include is
named in ``problems`` and the page is parsed without it.
"""

from __future__ import annotations

import re
from pathlib import Path

from citewise.config import Limits
from citewise.documents import SourceFile
from citewise.errors import CitewiseError
from citewise.sources.folder import read_text_file
from citewise.sources.layout import DocsTree

__all__ = ["expand_includes"]

_MAX_DEPTH = 8
_MARKDOWN = (".md", ".markdown", ".mdown", ".mkdn", ".mkd")
_RST_INCLUDE_RE = re.compile(
    r"^(?P<indent>[ \t]*)\.\. +(?P<kind>include|literalinclude)::[ \t]*(?P<target>.*?)\s*$"
)
_LITERAL_DIRECTIVE_RE = re.compile(
    r"^\.\. +(?:code-block|code|sourcecode|parsed-literal|highlight|literalinclude|doctest)::"
)
_OPTION_RE = re.compile(r"^[ \t]*:(?P<name>[\w-]+):[ \t]*(?P<value>.*?)\s*$")
_FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_MYST_INCLUDE_RE = re.compile(r"^\{(?P<kind>include|literalinclude)\}[ \t]*(?P<target>.*?)\s*$")
_SNIPPET_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<escape>;?)-{1,}8<-{1,}[ \t]*(?P<spec>.*?)\s*$")
_SNIPPET_SECTION_RE = re.compile(r"^\s*-{1,}8<-{1,}\s*\[(?:start|end):[\w-]+\]\s*$")


def expand_includes(
    source: SourceFile, tree: DocsTree, problems: dict[str, str], limits: Limits | None = None
) -> SourceFile:
    """``source`` with its includes expanded (itself when it has none or is binary); an
    included file over the file size limit of ``limits`` (default: :class:`Limits`'
    defaults) is not read, and named in ``problems``."""
    if source.binary:
        return source
    suffix = source.path.suffix.lower()
    if suffix == ".rst":
        expand = _expand_rst
    elif suffix in _MARKDOWN and tree.layout.generator == "sphinx":
        expand = _expand_myst
    elif suffix in _MARKDOWN and tree.snippet_bases:
        expand = _expand_snippets
    else:
        return source
    text = source.text
    if "8<" not in text and "include" not in text:
        return source
    expander = _Expander(tree, source.doc_id, problems, limits or Limits())
    expanded = expand(expander, text, source.path, 0)
    return source if expanded == text else SourceFile(source.doc_id, source.path, expanded)


class _Expander:
    def __init__(
        self, tree: DocsTree, doc_id: str, problems: dict[str, str], limits: Limits
    ) -> None:
        self.tree = tree
        self.limits = limits
        self.doc_id = doc_id
        self.problems = problems
        self.root = tree.project_root.resolve()

    def read(self, target: str, relative_to: Path) -> tuple[str, Path] | None:
        """The text of the file ``target`` names (relative to ``relative_to``'s folder, or
        with a leading ``/`` to the source folder), or None (and a problem named)."""
        target = target.strip().strip("\"'")
        if not target or target.startswith("<"):
            self.fail(target, "a standard docutils include: not read")
            return None
        if target.startswith("/"):
            path = self.tree.source_dir / target.lstrip("/")
        else:
            path = relative_to.parent / target
        return self.read_path(target, path)

    def read_path(self, target: str, path: Path) -> tuple[str, Path] | None:
        resolved = path.resolve()
        if not resolved.is_relative_to(self.root):
            self.fail(target, "outside the project folder: not read")
            return None
        if not resolved.is_file():
            self.fail(target, "included file not found")
            return None
        try:
            return read_text_file(resolved, self.limits), resolved
        except (CitewiseError, OSError) as error:
            self.fail(target, f"included file not read: {error}")
            return None

    def fail(self, target: str, why: str) -> None:
        self.problems[f"{self.doc_id} (include {target})"] = why


# --- reStructuredText ------------------------------------------------------------------------


def _expand_rst(expander: _Expander, text: str, path: Path, depth: int) -> str:
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    literal: int | None = None  # the indent of the line that opened a literal block
    while index < len(lines):
        line = lines[index]
        width = len(line) - len(line.lstrip())
        if literal is not None and line.strip() and width <= literal:
            literal = None
        match = _RST_INCLUDE_RE.match(line) if literal is None else None
        if match is None or depth >= _MAX_DEPTH:
            # An include shown in a literal block (``::``, code-block) is an example.
            if literal is None and line.strip() and _opens_literal(line):
                literal = width
            out.append(line)
            index += 1
            continue
        indent = match["indent"]
        options: dict[str, str] = {}
        index += 1
        while index < len(lines) and (option := _OPTION_RE.match(lines[index])) and \
                len(lines[index]) - len(lines[index].lstrip()) > len(indent):  # fmt: skip
            options[option["name"]] = option["value"]
            index += 1
        found = expander.read(match["target"], path)
        if found is None:
            continue
        content, where = found
        content = _select(content, options)
        if match["kind"] == "literalinclude" or "literal" in options or "code" in options:
            language = options.get("language") or options.get("code") or ""
            body = [f"{indent}   {line}" if line.strip() else "" for line in content.split("\n")]
            out.extend([f"{indent}.. code-block:: {language}".rstrip(), "", *body, ""])
            continue
        if "parser" in options or where.suffix.lower() in _MARKDOWN:
            # Markdown inside reStructuredText would be misread: keep it as a literal block.
            body = [f"{indent}   {line}" if line.strip() else "" for line in content.split("\n")]
            out.extend([f"{indent}.. code-block:: markdown", "", *body, ""])
            continue
        nested = _expand_rst(expander, content, where, depth + 1)
        out.extend(f"{indent}{line}" if line.strip() else "" for line in nested.split("\n"))
    return "\n".join(out)


def _opens_literal(line: str) -> bool:
    """Whether the indented lines after ``line`` are literal text, not reStructuredText."""
    stripped = line.strip()
    if stripped.startswith(".. "):
        return _LITERAL_DIRECTIVE_RE.match(stripped) is not None
    return stripped.endswith("::")


def _select(content: str, options: dict[str, str]) -> str:
    """The part of an included file its options name (docutils' and Sphinx's)."""
    lines = content.split("\n")
    if (start := options.get("start-line", "")).lstrip("-").isdigit():
        lines = lines[int(start) :]
    if (end := options.get("end-line", "")).lstrip("-").isdigit():
        lines = lines[: int(end) - int(start or 0) if start.isdigit() else int(end)]
    if "lines" in options:
        lines = _line_ranges(lines, options["lines"])
    content = "\n".join(lines)
    if marker := options.get("start-after"):
        head, found, tail = content.partition(marker)
        content = tail if found else content
        content = (
            content.split("\n", 1)[1]
            if "\n" in content and not content.split("\n", 1)[0].strip()
            else content
        )
    if marker := options.get("end-before"):
        content = content.partition(marker)[0]
    if (dedent := options.get("dedent", "")).isdigit():
        width = int(dedent)
        content = "\n".join(line[width:] if line[:width].isspace() else line.lstrip()
                            for line in content.split("\n"))  # fmt: skip
    return content.strip("\n")


def _line_ranges(lines: list[str], spec: str) -> list[str]:
    """Sphinx's ``:lines: 1,3,5-10,20-`` (1-based)."""
    picked: list[str] = []
    for part in spec.split(","):
        first, dash, last = part.strip().partition("-")
        if not (first.isdigit() or (dash and not first)):
            continue
        start = int(first) if first.isdigit() else 1
        stop = (int(last) if last.isdigit() else len(lines)) if dash else start
        picked.extend(lines[start - 1 : stop])
    return picked


# --- MyST ------------------------------------------------------------------------------------


def _expand_myst(expander: _Expander, text: str, path: Path, depth: int) -> str:
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        fence = _FENCE_RE.match(lines[index])
        if fence is None:
            out.append(lines[index])
            index += 1
            continue
        close = _closing(lines, index, fence["indent"], fence["fence"])
        directive = _MYST_INCLUDE_RE.match(fence["info"].strip())
        if directive is None or depth >= _MAX_DEPTH:
            out.extend(lines[index:close])
            index = close
            continue
        options, _body = _myst_options(lines[index + 1 : max(index + 1, close - 1)])
        index = close
        found = expander.read(directive["target"], path)
        if found is None:
            continue
        content, where = _select(found[0], options), found[1]
        if directive["kind"] == "literalinclude" or "literal" in options or "code" in options:
            language = options.get("language") or options.get("code") or ""
            ticks = "`" * max(3, _longest_backticks(content) + 1)
            out.extend([f"{ticks}{language}", content, ticks])
            continue
        nested = _expand_myst(expander, content, where, depth + 1)
        offset = options.get("heading-offset", "")
        if offset.isdigit() and int(offset):
            nested = _offset_headings(nested, int(offset))
        out.extend(nested.split("\n"))
    return "\n".join(out)


def _closing(lines: list[str], start: int, indent: str, fence: str) -> int:
    """The index after the fence opened at ``start`` closes (the end when it never does)."""
    for index in range(start + 1, len(lines)):
        stripped = lines[index].strip()
        if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
            return index + 1
    return len(lines)


def _myst_options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """A MyST directive's ``:name: value`` lines (or ``---`` YAML block) and its content."""
    options: dict[str, str] = {}
    index = 0
    if body and body[0].strip() == "---":
        index = 1
        while index < len(body) and body[index].strip() != "---":
            name, _, value = body[index].partition(":")
            if name.strip():
                options[name.strip()] = value.strip().strip("\"'")
            index += 1
        return options, body[index + 1 :]
    while index < len(body) and (option := _OPTION_RE.match(body[index])):
        options[option["name"]] = option["value"].strip("\"'")
        index += 1
    return options, body[index:]


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def _offset_headings(text: str, offset: int) -> str:
    out = []
    in_fence = False
    for line in text.split("\n"):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        if not in_fence and re.match(r"#{1,6}\s", line):
            line = "#" * offset + line
        out.append(line)
    return "\n".join(out)


# --- pymdownx.snippets -----------------------------------------------------------------------


def _expand_snippets(expander: _Expander, text: str, path: Path, depth: int) -> str:
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        match = _SNIPPET_RE.match(line)
        index += 1
        if match is None:
            out.append(line)
            continue
        if _SNIPPET_SECTION_RE.match(line):
            continue  # a section marker is never shown
        if match["escape"]:
            out.append(line.replace(";", "", 1))
            continue
        indent, spec = match["indent"], match["spec"]
        specs = [spec]
        if not spec:
            # The block form: one file per line up to the closing --8<--.
            specs = []
            while index < len(lines) and not _SNIPPET_RE.match(lines[index]):
                if lines[index].strip() and not lines[index].lstrip().startswith(";"):
                    specs.append(lines[index].strip())
                index += 1
            index += 1
        for one in specs:
            content = _snippet(expander, one.strip().strip("\"'"), depth)
            if content is not None:
                out.extend(f"{indent}{ln}" if ln.strip() else ln for ln in content.split("\n"))
    return "\n".join(out)


def _snippet(expander: _Expander, spec: str, depth: int) -> str | None:
    """One snippet ``file``, ``file:3:5`` (lines) or ``file:name`` (a marked section)."""
    if not spec or depth >= _MAX_DEPTH or re.match(r"^[a-z]+://", spec):
        return None
    name, section, start, end = spec, "", None, None
    if ranged := re.fullmatch(r"(.+?):(\d*):(\d*)", spec):
        name, start = ranged[1], int(ranged[2] or 1)
        end = int(ranged[3]) if ranged[3] else None
    elif one := re.fullmatch(r"(.+?):(\d+)", spec):
        name, start = one[1], int(one[2])
    elif named := re.fullmatch(r"(.+?):([\w-]+)", spec):
        name, section = named[1], named[2]
    found = None
    for base in expander.tree.snippet_bases:
        if (base / name).is_file():
            found = expander.read_path(name, base / name)
            break
    else:
        expander.fail(name, "snippet not found in the snippets' base_path")
        return None
    if found is None:
        return None
    lines = found[0].split("\n")
    if section:
        lines = _snippet_section(lines, section)
    elif start is not None:
        lines = lines[start - 1 : end]
    return _expand_snippets(expander, "\n".join(lines), found[1], depth + 1)


def _snippet_section(lines: list[str], name: str) -> list[str]:
    start = re.compile(rf"-{{1,}}8<-{{1,}}\s*\[start:{re.escape(name)}\]")
    end = re.compile(rf"-{{1,}}8<-{{1,}}\s*\[end:{re.escape(name)}\]")
    picked: list[str] = []
    inside = False
    for line in lines:
        if start.search(line):
            inside = True
        elif end.search(line):
            inside = False
        elif inside:
            picked.append(line)
    return picked
