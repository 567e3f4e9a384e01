"""The API reference: ``::: package.module`` directives expanded from the release's own source.

mkdocstrings renders each directive from docstrings that griffe reads from the source (without
importing it). This module does the same, with the rules of mkdocstrings' Python handler: the
handler options of ``mkdocs.yml``/``zensical.toml`` (``members``, ``filters``,
``show_submodules``, ``merge_init_into_class``, ``show_if_no_docstring``, ``heading_level``,
``show_root_heading``, ``docstring_style``), members grouped as attributes, classes, functions
then modules, each alphabetical. Every rendered object becomes a section at the anchor the
site gives it (its dotted path: ``reference/#pkg.GraphConfig.build_input``), titled as the
built page shows it (:mod:`citewise.parsing.api_titles`), its signature opening the body,
then its docstring, labels, bases and source file.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from citewise.errors import SourceError
from citewise.models import Section
from citewise.parsing.api_directives import (
    DIRECTIVE_RE,
    HEADING_DIRECTIVE_RE,
    Directive,
    directive_options,
    find_directives,
    has_directives,
)
from citewise.parsing.api_titles import source_title
from citewise.parsing.autodoc import AutodocOptions, AutodocSettings, autodoc_objects
from citewise.parsing.autodoc_docs import docstring_directives
from citewise.parsing.griffe_loading import lazy_object, load_release
from citewise.parsing.griffe_objects import (
    ApiOptions,
    docstring_text,
    documented_parameters,
    filtered,
    is_public,
    kind_of,
    labels_of,
    ordered,
    signature,
)

__all__ = ["ApiObject", "ApiOptions", "ApiReference", "DIRECTIVE_RE", "has_directives"]

_NOT_SOURCE = frozenset({"node_modules", "site-packages", "__pycache__", "build", "dist", "venv"})
# Labels as mkdocstrings shows them after a name, in its order.
_SHOWN_LABELS = ("property", "writable", "classmethod", "staticmethod", "abstractmethod",
                 "async", "cached", "dataclass", "generator", "coroutine")  # fmt: skip


@dataclass(frozen=True)
class ApiObject:
    """One rendered object: its dotted path (the site's anchor), level, title and text."""

    path: str
    name: str
    kind: str
    level: int
    title: str
    text: str
    labels: tuple[str, ...] = ()


@dataclass
class ApiReference:
    """Renders directives from the Python sources under ``paths`` (``root`` is the project
    folder source paths are shown relative to); ``dependencies`` are folders the project's
    dependencies are installed in, for bases from another distribution."""

    paths: tuple[Path, ...]
    root: Path
    dependencies: tuple[Path, ...] = ()
    options: ApiOptions = field(default_factory=ApiOptions)
    # A Sphinx site's conf.py settings for its autodoc directives.
    autodoc_settings: AutodocSettings = field(default_factory=AutodocSettings)
    _loaded: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_handler(cls, handler: Mapping[str, Any], root: Path) -> ApiReference:
        """From the ``handlers.python`` table of mkdocstrings' config; ``paths`` default to
        ``src`` when it exists, else the project folder (as mkdocstrings does)."""
        raw = handler.get("paths")
        paths = [str(p) for p in raw] if isinstance(raw, list) else []
        if not paths:
            paths = ["src"] if (root / "src").is_dir() else ["."]
        options = handler.get("options")
        return cls(
            paths=tuple((root / p).resolve() for p in paths),
            root=root.resolve(),
            options=ApiOptions.from_mapping(options if isinstance(options, Mapping) else {}),
        )

    def fingerprint(self) -> str:
        """Changes when any Python source under the paths, or the options, change."""
        digest = hashlib.sha256(repr((self.options, self.autodoc_settings)).encode())
        for base in self.paths:
            for path in sorted(base.rglob("*.py")) if base.is_dir() else []:
                relative = path.relative_to(base)
                # A project-root path must not pull in its virtualenvs and build output.
                if any(p.startswith(".") or p in _NOT_SOURCE for p in relative.parts[:-1]):
                    continue
                digest.update(relative.as_posix().encode() + b"\0")
                digest.update(path.read_bytes())
        # A dependency's upgrade can change inherited members: its installed version counts.
        for folder in self.dependencies:
            for info in sorted(folder.glob("*.dist-info")) if folder.is_dir() else []:
                digest.update(info.name.encode() + b"\0")
        return digest.hexdigest()

    def render(
        self,
        identifier: str,
        options: ApiOptions | None = None,
        *,
        base_level: int | None = None,
        depth: int = 0,
    ) -> list[ApiObject]:
        """The objects a ``::: identifier`` directive renders, in page order.

        Raises:
            SourceError: the identifier names no object found under the source paths.
        """
        opts = options or self.options
        obj = self._find(identifier, external=bool(opts.autodoc))
        level = opts.heading_level if base_level is None else base_level
        if opts.autodoc:
            autodoc = AutodocOptions.resolve(
                opts.autodoc, dict(opts.autodoc_options), self.autodoc_settings
            )
            # Sphinx signs a class with its __init__'s parameters.
            opts = replace(opts, merge_init_into_class=True)

            roots = {identifier, f"module-{identifier}"}

            def emit(member: Any, path: str, depth: int, docstring: str) -> ApiObject:
                return self._object(
                    member, depth, opts, path=path, docstring=docstring, root=path in roots
                )

            found = list(autodoc_objects(obj, identifier, opts.autodoc, autodoc, level, emit))
            return self._with_nested(found, opts, depth)
        rendered: list[ApiObject] = []
        if opts.show_root_heading:
            rendered.extend(self._with_parameters(obj, level, opts, root=True))
            level += 1
        rendered.extend(self._children(obj, level, opts, root=True))
        return rendered

    def _with_nested(self, found: list[ApiObject], opts: ApiOptions, depth: int) -> list[ApiObject]:
        """Objects, each followed by what the autodoc directives in its docstring document
        (a module's docstring listing its classes), relative to the object's module."""
        if depth >= 2:
            return found
        out: list[ApiObject] = []
        for api in found:
            out.append(api)
            for kind, target, given in docstring_directives(api.text):
                module = api.path.removeprefix("module-") if api.kind == "module" else ""
                if not module:
                    continue
                head = target.rpartition(".")[0]
                explicit = (
                    head.rpartition(".")[0]
                    if kind in ("automethod", "autoattribute", "autoproperty")
                    else head
                )
                path = target if explicit or kind == "automodule" else f"{module}.{target}"
                nested = replace(opts, autodoc=kind, autodoc_options=tuple(given.items()))
                try:
                    out.extend(self.render(path, nested, base_level=api.level + 1, depth=depth + 1))
                except SourceError:
                    continue
        return out

    def expand(
        self, sections: Sequence[Section], problems: dict[str, str] | None = None
    ) -> list[Section]:
        """Sections with each ``:::`` directive line (and its indented options) replaced by
        one section per rendered object, after the section that held it.

        A directive naming nothing in the source stays as written, and ``problems`` gets
        ``{doc_id}#{identifier}`` with the reason.
        """
        out: list[Section] = []
        renamed: dict[str, str] = {}
        for section in sections:
            heading = HEADING_DIRECTIVE_RE.match(section.title)
            if heading is not None:
                # `## ::: pkg.Class`: the heading is the object's, at the heading's level.
                lines = section.text.split("\n")
                block = [ln[4:] for ln in _leading_block(lines)]
                rest = "\n".join(lines[len(block) :]).strip()
                directive = Directive(
                    heading["identifier"], directive_options(block), section.level
                )
                holder = replace(section, text=rest, heading_path=section.heading_path[:-1])
                rendered, missed = self._expand_one(holder, directive, problems)
                if not rendered:
                    out.append(replace(section, text="\n\n".join(p for p in (missed, rest) if p)))
                    continue
                # The text under the heading, and the directives in it, follow the object.
                kept, nested = find_directives(rest)
                inner = replace(holder, heading_path=(*holder.heading_path, rendered[0].title))
                after: list[Section] = []
                for each in nested:
                    objects, missed = self._expand_one(inner, each, problems)
                    after.extend(objects)
                    kept = "\n\n".join(p for p in (kept, missed) if p)
                if kept:
                    last = rendered[-1]
                    rendered[-1] = replace(last, text=f"{last.text}\n\n{kept}".strip())
                rendered.extend(after)
                renamed[section.title] = rendered[0].title
                out.extend(rendered)
                continue
            if renamed:
                section = replace(
                    section, heading_path=tuple(renamed.get(t, t) for t in section.heading_path)
                )
            if ":::" not in section.text:
                out.append(section)
                continue
            kept, directives = find_directives(section.text)
            if not directives:
                out.append(section)
                continue
            found: list[Section] = []
            missed_lines: list[str] = []
            for directive in directives:
                rendered, missed = self._expand_one(section, directive, problems)
                found.extend(rendered)
                if missed:
                    missed_lines.append(missed)
            text = "\n\n".join(part for part in (kept, *missed_lines) if part)
            out.append(replace(section, text=text))
            out.extend(found)
        return out

    def _expand_one(
        self, holder: Section, directive: Directive, problems: dict[str, str] | None
    ) -> tuple[list[Section], str]:
        """One directive's sections, or none and the directive line kept as written."""
        local = dict(directive.options)
        if directive.heading_level:
            local["heading_level"] = directive.heading_level
        options = self.options.merged(local) if local else self.options
        try:
            return _sections(holder, self.render(directive.identifier, options)), ""
        except SourceError as error:
            reason = str(error)
        except Exception as error:  # noqa: BLE001  (source griffe cannot model: one directive)
            reason = f"API reference: cannot render {directive.identifier!r}: {error!r}"
        if problems is not None:
            problems[f"{holder.doc_id}#{directive.identifier}"] = reason
        return [], f"::: {directive.identifier}"

    # --- griffe ---------------------------------------------------------------------------

    def _find(self, identifier: str, *, external: bool) -> Any:
        identifier = identifier.replace(":", ".")
        package = identifier.split(".", 1)[0]
        if package not in self._loaded:
            self._loaded[package] = load_release(
                package, self.paths, self.options, runtime=external,
                dependencies=self.dependencies,
            )  # fmt: skip
        collection = self._loaded[package].modules_collection
        try:
            found: Any = collection[identifier]
        except KeyError:
            found = lazy_object(collection, identifier) if external else None
            if found is None:
                message = f"API reference: no object {identifier!r} in the source"
                raise SourceError(message) from None
        return found

    def _children(
        self, obj: Any, level: int, opts: ApiOptions, *, root: bool
    ) -> Iterator[ApiObject]:
        members_list = opts.members if root else None
        try:
            found = obj.all_members if opts.inherited_members else obj.members
        except Exception:  # a base class outside the source
            found = obj.members
        members = {n: m for n, m in found.items() if kind_of(m) != "alias"}
        for kind in ("attribute", "type alias", "class", "function", "module"):
            if kind == "module" and not opts.show_submodules:
                continue
            chosen = [m for m in members.values() if kind_of(m) == kind]
            chosen = filtered(chosen, opts, members_list)
            order = "alphabetical" if kind == "module" else opts.members_order
            for member in ordered(chosen, order, members_list):
                if kind == "function" and obj.is_class and member.name == "__init__":
                    if opts.merge_init_into_class:
                        continue
                visible = (
                    opts.filters == "public"
                    or members_list is not None
                    or (not member.is_alias if kind == "module" else not member.is_imported)
                    or is_public(member)
                )
                if not visible:
                    continue
                yield from self._with_parameters(member, level, opts)
                if kind in ("class", "module"):
                    yield from self._children(member, level + 1, opts, root=False)

    def _with_parameters(
        self, obj: Any, level: int, opts: ApiOptions, *, root: bool = False
    ) -> Iterator[ApiObject]:
        """The object, then a heading per documented parameter (``parameter_headings``) at
        ``{path}({name})`` and type parameter (``type_parameter_headings``) at
        ``{owner}[{name}]``, the ids mkdocstrings-python's templates give them."""
        shown = self._object(obj, level, opts, root=root)
        yield shown
        if kind_of(obj) not in ("class", "function"):
            return
        if opts.parameter_headings:
            for _, name, text in documented_parameters(obj, opts):
                yield ApiObject(f"{shown.path}({name})", name, "parameter", level + 1, name, text)
        if opts.type_parameter_headings:
            for owner, name, text in documented_parameters(obj, opts, "type parameters"):
                path = f"{shown.path}.{owner}" if owner else shown.path
                yield ApiObject(f"{path}[{name}]", name, "type parameter", level + 1, name, text)

    def _object(
        self,
        obj: Any,
        level: int,
        opts: ApiOptions,
        *,
        path: str = "",
        docstring: str | None = None,
        root: bool = False,
    ) -> ApiObject:
        kind = kind_of(obj)
        labels = tuple(label for label in _SHOWN_LABELS if label in labels_of(obj))
        params = signature(obj, opts) if kind in ("function", "class") else None
        # Titled as the built site shows the object; the signature opens the body.
        title = source_title(obj, path or obj.path, root=root, autodoc=opts.autodoc)
        parts: list[str] = []
        if params is not None:
            parts.append(f"```python\n{obj.name}({params})\n```")
        if labels:
            parts.append(" ".join(f"`{label}`" for label in labels))
        if kind == "class":
            bases = [str(base) for base in getattr(obj, "bases", [])]
            if bases:
                parts.append("Bases: " + ", ".join(f"`{b}`" for b in bases))
        if docstring is None:
            docstring = docstring_text(obj, opts)
        if docstring:
            parts.append(docstring)
        source = self._source_path(obj)
        if source and kind != "module":
            parts.append(f"Source code in `{source}`")
        return ApiObject(path or obj.path, obj.name, kind, level, title, "\n\n".join(parts), labels)

    def _source_path(self, obj: Any) -> str:
        try:
            filepath = obj.filepath
        except Exception:  # an alias whose target is outside the source
            return ""
        if isinstance(filepath, list):
            return ""
        return _relative_source(str(filepath), str(self.root))


@functools.cache
def _relative_source(filepath: str, root: str) -> str:
    """A source file as shown under the project folder (resolved once per file)."""
    try:
        return Path(filepath).resolve().relative_to(root).as_posix()
    except ValueError:
        return Path(filepath).name


def _sections(holder: Section, objects: Iterable[ApiObject]) -> list[Section]:
    """Rendered objects as sections of the page that holds their directive.

    Heading paths nest by level under the holder's headings above the first object's level;
    an object deeper than h6 has no heading of its own (nor a search entry on the site), so
    its text joins the section above it.
    """
    base = _page_url(holder.url)
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    prefix: tuple[str, ...] | None = None
    for api in objects:
        if prefix is None:
            prefix = holder.heading_path[: max(api.level - 1, 1)]
        if api.level > 6 and sections:
            last = sections[-1]
            heading = f"{'#' * 6} {api.title}"
            sections[-1] = replace(last, text=f"{last.text}\n\n{heading}\n\n{api.text}")
            continue
        while stack and stack[-1][0] >= api.level:
            stack.pop()
        stack.append((api.level, api.title))
        sections.append(
            Section(
                doc_id=holder.doc_id,
                title=api.title,
                heading_path=(*prefix, *(title for _, title in stack)),
                level=api.level,
                anchor=api.path,
                url=f"{base}#{api.path}",
                page=holder.page,
                text=api.text,
                scope=holder.scope,
            )
        )
    return sections


def _page_url(url: str) -> str:
    return url.split("#", 1)[0]


def _leading_block(lines: Sequence[str]) -> list[str]:
    """The indented lines (a directive's YAML options) at the start of a section's text."""
    block: list[str] = []
    for line in lines:
        if not (line.startswith("    ") or not line.strip()):
            break
        block.append(line)
    while block and not block[-1].strip():
        block.pop()
    return block
