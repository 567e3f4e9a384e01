"""Reads a docs site's navigation (mkdocs.yml or zensical.toml) and derives search scopes from it.

Scope rule (documented in docs/releases.md):

- every top-level nav section (an entry whose value is a list) is a scope, named by the one
  top-level folder all its pages live in (``Demo Stack`` → ``demo/`` → ``demo``), else by a slug
  of its title;
- the main scope (``library`` by default) holds every page except those of the sections
  declared *separate* (``ScopeRule.separate``, CLI ``--separate-scope``): pages outside any
  section (Home, Getting Started, Reference…) and the pages of every other section;
- ``all`` is everything and is never stored: it means "no filter".

A page so belongs to one or two scopes (``tutorials`` and ``library``); the scope string stored
with its chunks lists them separated by single spaces, and a scope filter matches membership.
"""

from __future__ import annotations

import posixpath
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from citewise.errors import ConfigurationError, SourceError
from citewise.parsing.autodoc import AutodocSettings
from citewise.parsing.mkdocstrings import ApiReference
from citewise.sources.sphinx_conf import find_sphinx_conf, read_sphinx_conf

__all__ = [
    "ALL_SCOPE",
    "MAIN_SCOPE",
    "SITE_CONFIG_NAMES",
    "Nav",
    "NavScopes",
    "NavSection",
    "ScopeRule",
    "SiteConfig",
    "find_site_config",
    "folder_api_reference",
    "folder_nav_scopes",
    "nav_scopes",
    "read_site_config",
    "scope_slug",
    "sphinx_nav",
]

SITE_CONFIG_NAMES = ("mkdocs.yml", "mkdocs.yaml", "zensical.toml")
MAIN_SCOPE = "library"
ALL_SCOPE = "all"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_TOCTREE = re.compile(r"^\s*\.\. +toctree::")
_TOC_ENTRY = re.compile(r"^.*<([^<>]+)>$")
_PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1+\s*$")


@dataclass(frozen=True)
class NavSection:
    """A top-level nav section: its title and its pages (docs-relative paths, nested flattened)."""

    title: str
    pages: tuple[str, ...]


@dataclass(frozen=True)
class Nav:
    """A site's navigation: top-level pages outside any section, and the top-level sections."""

    pages: tuple[str, ...] = ()
    sections: tuple[NavSection, ...] = ()


@dataclass(frozen=True)
class SiteConfig:
    """What citewise reads from a site's config file; ``nav`` is None when it declares none."""

    path: Path
    docs_dir: Path
    site_url: str
    nav: Nav | None
    # mkdocstrings' Python handler table (``paths``, ``options``), None without the plugin.
    api_handler: dict[str, Any] | None = None
    # ``a.md`` at ``a/`` (the default) or at ``a.html``.
    use_directory_urls: bool = True
    # gitignore-style lines of files that are no pages.
    exclude_docs: str = ""
    # The theme's template folder (``theme.custom_dir``), which holds no pages.
    theme_dir: Path | None = None
    # pymdownx.snippets' ``base_path`` folders (relative to the config file), empty without it.
    snippet_bases: tuple[str, ...] = ()
    # The names of the Markdown extensions it enables (``pymdownx.emoji``…).
    markdown_extensions: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScopeRule:
    """How nav sections become scopes.

    Args:
        main: the scope holding every page outside the separate sections.
        separate: sections (by scope name or title, case-insensitive) kept out of ``main``.
    """

    main: str = MAIN_SCOPE
    separate: tuple[str, ...] = ()


@dataclass(frozen=True)
class NavScopes:
    """The scopes of a docs set: ``scope_of(doc_id)`` gives a page's space-separated scope list."""

    main: str
    by_page: dict[str, str]
    by_folder: dict[str, str]
    sections: dict[str, str] = field(default_factory=dict)  # scope name → section title

    @property
    def names(self) -> tuple[str, ...]:
        """Every scope a search can name, ``all`` first."""
        return (ALL_SCOPE, self.main, *sorted(self.sections))

    def scope_of(self, doc_id: str) -> str:
        """A listed page's scopes; an unlisted one takes its folder's section, else the main."""
        found = self.by_page.get(_normalise(doc_id) or doc_id)
        if found is not None:
            return found
        head, sep, _ = doc_id.partition("/")
        return self.by_folder.get(head, self.main) if sep else self.main


def scope_slug(value: str) -> str:
    """A scope name: lowercase ASCII letters, digits, ``_`` and ``-`` (``How-To Guides`` →
    ``how-to-guides``)."""
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9_]+", "-", ascii_text.lower()).strip("-")


def find_site_config(docs_dir: Path) -> Path | None:
    """The site config in the folder above ``docs_dir`` whose ``docs_dir`` is that folder."""
    for name in SITE_CONFIG_NAMES:
        candidate = docs_dir.parent / name
        if not candidate.is_file():
            continue
        config = read_site_config(candidate)
        if config.docs_dir.resolve() == docs_dir.resolve():
            return candidate
    return None


def read_site_config(path: Path) -> SiteConfig:
    """Read ``mkdocs.yml`` (custom tags such as ``!!python/name:`` read as null) or
    ``zensical.toml`` (``[project]`` table).

    Raises:
        SourceError: the file cannot be read or parsed, or its ``nav`` is not a list.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SourceError(f"{path}: cannot read site config: {error}") from None
    if path.suffix == ".toml":
        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise SourceError(f"{path}: invalid TOML: {error}") from None
        data = data.get("project", {})
    else:
        try:
            data = yaml.load(text, Loader=_SiteLoader)  # noqa: S506  (a SafeLoader subclass)
        except yaml.YAMLError as error:
            raise SourceError(f"{path}: invalid YAML: {_one_line(error)}") from None
    if not isinstance(data, dict):
        data = {}
    docs_dir = data.get("docs_dir")
    site_url = data.get("site_url")
    raw_nav = data.get("nav")
    if raw_nav is not None and not isinstance(raw_nav, list):
        raise SourceError(f"{path}: nav must be a list, not {type(raw_nav).__name__}")
    return SiteConfig(
        path=path,
        docs_dir=path.parent / (docs_dir if isinstance(docs_dir, str) and docs_dir else "docs"),
        site_url=site_url if isinstance(site_url, str) else "",
        nav=_read_nav(raw_nav) if raw_nav is not None else None,
        api_handler=_python_handler(data.get("plugins")),
        use_directory_urls=data.get("use_directory_urls") is not False,
        exclude_docs=exclude if isinstance(exclude := data.get("exclude_docs"), str) else "",
        theme_dir=_theme_dir(data.get("theme"), path.parent),
        snippet_bases=_snippet_bases(data.get("markdown_extensions")),
        markdown_extensions=_extension_names(data.get("markdown_extensions")),
    )


def _extension_names(extensions: Any) -> tuple[str, ...]:
    """Extension names from an mkdocs.yml list (names and one-key tables) or nested TOML
    tables (``[project.markdown_extensions.pymdownx.emoji]``)."""
    names: list[str] = []
    if isinstance(extensions, list):
        for entry in extensions:
            if isinstance(entry, str):
                names.append(entry)
            elif isinstance(entry, dict):
                names.extend(str(key) for key in entry)
    elif isinstance(extensions, dict):
        for key, value in extensions.items():
            if key == "pymdownx" and isinstance(value, dict):
                names.extend(f"pymdownx.{name}" for name in value)
            else:
                names.append(str(key))
    return tuple(names)


def _theme_dir(theme: Any, config_folder: Path) -> Path | None:
    custom = theme.get("custom_dir") if isinstance(theme, dict) else None
    return config_folder / custom if isinstance(custom, str) and custom.strip() else None


def _snippet_bases(extensions: Any) -> tuple[str, ...]:
    """pymdownx.snippets' ``base_path`` (default ``.``, the config's folder) when the site
    uses the extension (an mkdocs.yml list of names and tables, or nested TOML tables)."""
    options: Any = None
    if isinstance(extensions, list):
        for entry in extensions:
            if entry == "pymdownx.snippets":
                options = {}
            elif isinstance(entry, dict) and "pymdownx.snippets" in entry:
                options = entry["pymdownx.snippets"] or {}
    elif isinstance(extensions, dict):
        pymdownx = extensions.get("pymdownx")
        if "pymdownx.snippets" in extensions:
            options = extensions["pymdownx.snippets"] or {}
        elif isinstance(pymdownx, dict) and "snippets" in pymdownx:
            options = pymdownx["snippets"] or {}
    if options is None:
        return ()
    base = options.get("base_path", ".") if isinstance(options, dict) else "."
    bases = [base] if isinstance(base, str) else base if isinstance(base, list) else ["."]
    return tuple(b for b in bases if isinstance(b, str)) or (".",)


def _python_handler(plugins: Any) -> dict[str, Any] | None:
    """mkdocstrings' ``handlers.python`` table from ``plugins`` (an mkdocs.yml list of names
    and one-key tables, or a zensical.toml table); ``{}`` when the plugin has no such table."""
    if isinstance(plugins, list):
        entries: dict[str, Any] = {}
        for entry in plugins:
            if isinstance(entry, str):
                entries[entry] = {}
            elif isinstance(entry, dict):
                entries.update(entry)
        plugins = entries
    if not isinstance(plugins, dict) or "mkdocstrings" not in plugins:
        return None
    config = plugins["mkdocstrings"]
    handlers = config.get("handlers") if isinstance(config, dict) else None
    python = handlers.get("python") if isinstance(handlers, dict) else None
    return dict(python) if isinstance(python, dict) else {}


def folder_api_reference(
    docs_dir: Path, config: Path | None = None, *, dependencies: Sequence[Path] = ()
) -> ApiReference | None:
    """Where a docs folder's API reference is rendered from, or None when it has none.

    An MkDocs/Zensical site with the mkdocstrings plugin reads its handler's ``paths``
    (relative to the config file; default ``src/`` when it exists, else the project folder)
    and ``options``. A Sphinx folder (``conf.py`` in it or in its ``source/``) documents the
    project it belongs to: the nearest folder above holding ``pyproject.toml``, ``setup.py`` or
    ``setup.cfg`` (``docs/source`` → the project root), its ``src/`` when there is one; its
    ``conf.py``'s autodoc settings are read (never run). None when no such folder exists:
    the source is only ever the release's own, never an installed copy. ``dependencies``
    (an environment's site-packages) are read only for what the source does not hold: bases
    from another distribution, mkdocstrings' ``preload_modules``.
    """
    path = config if config is not None else find_site_config(docs_dir)
    if path is not None:
        site = read_site_config(path)
        if site.api_handler is None:
            return None
        api = ApiReference.from_handler(site.api_handler, path.parent)
    elif (conf := find_sphinx_conf(docs_dir)) is not None:
        api = ApiReference.from_handler({}, _project_root(docs_dir))
        api.autodoc_settings = AutodocSettings.from_conf(read_sphinx_conf(conf))
    else:
        return None
    api.dependencies = tuple(dependencies)
    # Without the source (docs copied on their own), directives stay as they are written.
    return api if any(p.is_dir() for p in api.paths) else None


def _project_root(docs_dir: Path) -> Path:
    """The project folder a docs folder belongs to (see :func:`folder_api_reference`)."""
    folder = docs_dir.resolve()
    for candidate in list(folder.parents)[:3]:
        if any((candidate / name).is_file() for name in _PROJECT_FILES):
            return candidate
    return folder.parent


def folder_nav_scopes(
    docs_dir: Path, rule: ScopeRule | None = None, *, config: Path | None = None
) -> NavScopes | None:
    """The nav scopes of a docs folder, from ``config`` or the site config found above it.

    None when there is no site config or it declares no nav (the caller falls back to
    folder scopes).

    Raises:
        ConfigurationError: ``rule`` separates sections but there is no nav to find them in.
    """
    path = config if config is not None else find_site_config(docs_dir)
    site = read_site_config(path) if path is not None else None
    nav = site.nav if site is not None else sphinx_nav(docs_dir)
    if nav is None:
        if rule is not None and rule.separate:
            raise ConfigurationError(
                f"separate scopes need a site navigation: no {' or '.join(SITE_CONFIG_NAMES)} "
                f"with a nav for {docs_dir}"
            )
        return None
    return nav_scopes(nav, rule)


def sphinx_nav(docs_dir: Path) -> Nav | None:
    """A Sphinx folder's navigation: the root document's ``toctree``s, each under the title
    of the section that holds it (None without ``conf.py`` or toctrees). With the sources in
    ``docs/source``, the root document is there and page paths are relative to it.

    Entries are ``page`` or ``Title <page>``; a section's several toctrees join.
    """
    conf = find_sphinx_conf(docs_dir)
    root = conf.parent / "index.rst" if conf is not None else docs_dir / "index.rst"
    if conf is None or not root.is_file():
        return None
    lines = root.read_text(encoding="utf-8", errors="replace").splitlines()
    sections: dict[str, list[str]] = {}
    title = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.strip() and _UNDERLINE.match(following) and len(following) >= len(line.rstrip()):
            title = line.strip()
        if _TOCTREE.match(line):
            index += 1
            while index < len(lines) and (not lines[index].strip() or lines[index][:1] == " "):
                entry = lines[index].strip()
                if entry and not entry.startswith(":"):
                    target = _TOC_ENTRY.match(entry)
                    page = _normalise((target.group(1) if target else entry) + ".rst")
                    if page is not None:
                        sections.setdefault(title or "Contents", []).append(page)
                index += 1
            continue
        index += 1
    if not sections:
        return None
    return Nav((), tuple(NavSection(t, tuple(dict.fromkeys(p))) for t, p in sections.items()))


def nav_scopes(nav: Nav, rule: ScopeRule | None = None) -> NavScopes:
    """Apply the scope rule (see the module docstring) to a site's navigation.

    Raises:
        ConfigurationError: the main scope name is not a valid scope name, or a ``separate``
            entry names no nav section (the message lists the sections).
    """
    rule = rule or ScopeRule()
    if scope_slug(rule.main) != rule.main or rule.main == ALL_SCOPE:
        raise ConfigurationError(f"invalid main scope name {rule.main!r}")
    taken = {ALL_SCOPE, rule.main}
    named: list[tuple[str, NavSection, str | None]] = []
    for section in nav.sections:
        folder = _common_folder(section.pages)
        base = scope_slug(folder or section.title) or "section"
        name, number = base, 1
        while name in taken:
            number += 1
            name = f"{base}-{number}"
        taken.add(name)
        named.append((name, section, folder))

    wanted = {entry.strip() for entry in rule.separate if entry.strip()}
    unknown = sorted(e for e in wanted if not any(_names(e, n, s) for n, s, _ in named))
    if unknown:
        known = ", ".join(f"{n} ({s.title})" for n, s, _ in named) or "none"
        raise ConfigurationError(f"no nav section named {', '.join(unknown)} (sections: {known})")

    lists: dict[str, list[str]] = {}
    by_folder: dict[str, str] = {}
    for name, section, folder in named:
        separate = any(_names(entry, name, section) for entry in wanted)
        scopes = [name] if separate else [name, rule.main]
        for page in section.pages:
            _extend(lists.setdefault(page, []), scopes)
        if folder is not None:
            by_folder.setdefault(folder, " ".join(scopes))
    for page in nav.pages:
        _extend(lists.setdefault(page, []), [rule.main])
    return NavScopes(
        main=rule.main,
        by_page={page: " ".join(scopes) for page, scopes in lists.items()},
        by_folder=by_folder,
        sections={name: section.title for name, section, _ in named},
    )


class _SiteLoader(yaml.SafeLoader):
    """Safe YAML loading where unknown tags (``!!python/name:``, ``!ENV``…) read as null.

    MkDocs configs use such tags for Python callables and environment lookups; citewise needs
    none of them, and a safe loader must never construct them.
    """


def _null_for_custom_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> None:
    return None


_SiteLoader.add_multi_constructor("", _null_for_custom_tag)


def _read_nav(entries: Sequence[Any]) -> Nav:
    pages: list[str] = []
    sections: list[NavSection] = []
    for entry in entries:
        if isinstance(entry, str):
            pages.extend(_pages([entry]))
            continue
        if not isinstance(entry, dict):
            continue
        for title, value in entry.items():
            if isinstance(value, list):
                sections.append(NavSection(str(title), tuple(dict.fromkeys(_pages(value)))))
            else:
                pages.extend(_pages([value]))
    return Nav(tuple(dict.fromkeys(pages)), tuple(sections))


def _pages(entries: Iterable[Any]) -> Iterable[str]:
    """Every page path under nav entries, depth first; external links are skipped."""
    for entry in entries:
        if isinstance(entry, str):
            page = _normalise(entry)
            if page is not None:
                yield page
        elif isinstance(entry, list):
            yield from _pages(entry)
        elif isinstance(entry, dict):
            yield from _pages(entry.values())


def _normalise(entry: str) -> str | None:
    """A nav entry as a docs-relative POSIX path, or None for a link off the docs folder."""
    entry = entry.strip().replace("\\", "/")
    if not entry or _SCHEME.match(entry) or entry.startswith("/"):
        return None
    path = posixpath.normpath(entry)
    return None if path == "." or path.startswith("..") else path


def _common_folder(pages: Sequence[str]) -> str | None:
    heads = {page.split("/", 1)[0] if "/" in page else None for page in pages}
    if len(heads) != 1:
        return None
    return heads.pop()


def _names(entry: str, scope: str, section: NavSection) -> bool:
    """Whether a ``separate`` entry names this section, by scope name or title."""
    return entry.lower() in (scope, section.title.lower()) or scope_slug(entry) == scope


def _extend(target: list[str], scopes: Iterable[str]) -> None:
    target.extend(scope for scope in scopes if scope not in target)


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())
