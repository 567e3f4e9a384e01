"""What a docs folder builds, read from the site's own configuration: the page URL form, the
source folder, which files are pages and where included files may come from.

Nothing here runs project code: ``conf.py`` is read as literals (:mod:`.sphinx_conf`), YAML
safely, build scripts (Makefile, tox.ini, noxfile.py, CI workflows) as text.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from citewise.errors import SourceError
from citewise.parsing.layout import MKDOCS_LAYOUT, SiteLayout
from citewise.sources.nav import find_site_config, read_site_config
from citewise.sources.sphinx_conf import find_sphinx_conf, read_sphinx_conf

__all__ = ["DocsTree", "detect_layout", "docs_tree", "sphinx_builder"]

_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "PKG-INFO", ".git")
_READTHEDOCS = (".readthedocs.yaml", ".readthedocs.yml", "readthedocs.yaml", "readthedocs.yml")
# Build scripts that may run sphinx-build, most specific first (the docs folder's own, then the
# project's); the first that names one builder decides.
_BUILD_SCRIPTS = ("Makefile", "make.bat", "tox.ini", "noxfile.py", "justfile", "pyproject.toml")
_BUILDER_RE = re.compile(r"(?:-b|--builder|-M)[\s=]+([a-z]+)\b")
_SPHINX_MENTION_RE = re.compile(r"sphinx", re.IGNORECASE)
_PAGE_BUILDERS = {"html": False, "dirhtml": True}
_GENERATOR_NAMES = {"sphinx": "Sphinx", "mkdocs": "MkDocs"}
# Sphinx never reads these, whatever exclude_patterns says (its build folder by convention).
_SPHINX_ALWAYS_EXCLUDED = ("_build",)
# MkDocs' default exclude_docs: dotfiles and a top-level templates folder.
_MKDOCS_DEFAULT_EXCLUDES = (".*", "/templates/")


@dataclass(frozen=True)
class DocsTree:
    """A docs folder as its generator sees it.

    ``source_dir`` is where page paths start (``docs`` or ``docs/source``), ``project_root``
    the folder no included file may leave (the one holding the docs and their config).
    ``suffixes`` are the page suffixes the generator builds (None: every suffix citewise
    parses). ``snippet_bases`` are pymdownx.snippets' ``base_path`` folders, empty when the
    site does not use snippets.
    """

    layout: SiteLayout
    source_dir: Path
    project_root: Path
    suffixes: frozenset[str] | None = None
    excluded: tuple[str, ...] = ()
    snippet_bases: tuple[Path, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)

    def is_page(self, doc_id: str) -> bool:
        """Whether the generator builds the source ``doc_id`` (relative to ``source_dir``)."""
        suffix = posixpath.splitext(doc_id)[1].lower()
        if self.suffixes is not None and suffix not in self.suffixes:
            return False
        if self._index_beside(doc_id):
            return False
        return not any(_matches(doc_id, pattern) for pattern in self.excluded)

    def _index_beside(self, doc_id: str) -> bool:
        """An MkDocs README beside an ``index.md``: the index is the folder's page."""
        folder, name = posixpath.split(doc_id)
        if self.layout.generator != "mkdocs" or posixpath.splitext(name)[0] != "README":
            return False
        return (self.source_dir / folder / "index.md").is_file()

    def why_not_page(self, doc_id: str) -> str:
        """Why ``doc_id`` is not a page (for the skipped list)."""
        suffix = posixpath.splitext(doc_id)[1].lower()
        if self.suffixes is not None and suffix not in self.suffixes:
            built = ", ".join(sorted(self.suffixes))
            name = _GENERATOR_NAMES[self.layout.generator]
            return f"not a {name} source ({suffix or 'no suffix'}; the site is built from {built})"
        if self._index_beside(doc_id):
            return "not a page of the site (the folder's index.md is its page)"
        pattern = next((p for p in self.excluded if _matches(doc_id, p)), "")
        return f"not a page of the site (excluded by {pattern!r})"


def detect_layout(docs_dir: Path, page_form: str | None = None) -> SiteLayout:
    """The page URL form of the site built from ``docs_dir``; ``page_form`` (``dirhtml`` or
    ``html``), when given, overrides what the configuration says."""
    return docs_tree(docs_dir, page_form).layout


def docs_tree(docs_dir: Path, page_form: str | None = None) -> DocsTree:
    """Read what ``docs_dir`` builds from its site configuration (see :class:`DocsTree`)."""
    conf = find_sphinx_conf(docs_dir)
    site_config = find_site_config(docs_dir) if conf is None else None
    if conf is not None:
        tree = _sphinx_tree(docs_dir, conf)
    elif site_config is not None:
        tree = _mkdocs_tree(docs_dir, site_config)
    else:
        tree = DocsTree(MKDOCS_LAYOUT, docs_dir, docs_dir)
    if page_form is not None:
        tree = DocsTree(tree.layout.with_page_form(page_form), tree.source_dir,
                        tree.project_root, tree.suffixes, tree.excluded, tree.snippet_bases,
                        tree.notes)  # fmt: skip
    return tree


# --- Sphinx ---------------------------------------------------------------------------------


def _sphinx_tree(docs_dir: Path, conf: Path) -> DocsTree:
    settings = read_sphinx_conf(conf)
    source_dir = conf.parent
    project_root = _project_root(docs_dir)
    builder, where = sphinx_builder(docs_dir, project_root)
    suffix = settings.get("html_file_suffix")
    layout = SiteLayout(
        "sphinx",
        directory_urls=_PAGE_BUILDERS.get(builder or "html", False),
        suffix=suffix if isinstance(suffix, str) and suffix.startswith(".") else ".html",
        detected_from=where,
        myst_extensions=_strings_of(settings.get("myst_enable_extensions")),
    )
    excluded = [*_SPHINX_ALWAYS_EXCLUDED]
    for key in ("exclude_patterns", "templates_path", "html_static_path", "html_extra_path"):
        value = settings.get(key)
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple):
            for entry in value:
                if isinstance(entry, str) and entry.strip():
                    pattern = entry.strip().replace("\\", "/").rstrip("/")
                    excluded.append(pattern if key == "exclude_patterns" else f"{pattern}/**")
    return DocsTree(layout, source_dir, project_root, _sphinx_suffixes(settings),
                    tuple(excluded))  # fmt: skip


def _project_root(docs_dir: Path) -> Path:
    """The project a Sphinx docs folder belongs to: the nearest folder above it that holds a
    project file (``pyproject.toml``, ``setup.py``…; ``docs/source`` given → above ``docs``),
    else the folder above it."""
    for candidate in (docs_dir.parent, docs_dir.parent.parent):
        if any((candidate / marker).exists() for marker in _PROJECT_MARKERS):
            return candidate
    return docs_dir.parent


def _sphinx_suffixes(settings: dict[str, Any]) -> frozenset[str]:
    """The suffixes Sphinx reads: ``source_suffix`` (a string, list or mapping), plus ``.md``
    with MyST (myst_parser, myst_nb register it)."""
    given = settings.get("source_suffix", ".rst")
    if isinstance(given, str):
        found = {given}
    elif isinstance(given, dict | list | tuple):
        found = {s for s in given if isinstance(s, str)}
    else:
        found = {".rst"}
    extensions = settings.get("extensions", [])
    if isinstance(extensions, list | tuple) and any(
        isinstance(e, str) and e.split(".", 1)[0] in ("myst_parser", "myst_nb") for e in extensions
    ):
        found.add(".md")
    return frozenset(s.lower() if s.startswith(".") else f".{s.lower()}" for s in found)


def sphinx_builder(docs_dir: Path, project_root: Path) -> tuple[str | None, str]:
    """The Sphinx builder the site is published with, and the file that said so:
    Read the Docs' ``sphinx.builder`` or build commands, else a build script with one
    sphinx-build builder; ``(None, "default")`` when nothing names one."""
    for name in _READTHEDOCS:
        path = project_root / name
        if path.is_file():
            builder = _readthedocs_builder(path)
            if builder is not None:
                return builder, name
    scripts = [docs_dir / name for name in _BUILD_SCRIPTS]
    scripts += [project_root / name for name in _BUILD_SCRIPTS]
    workflows = project_root / ".github" / "workflows"
    if workflows.is_dir():
        scripts += sorted(workflows.glob("*.y*ml"))
    for path in scripts:
        if path.is_file():
            builders = _script_builders(_read(path))
            if len(builders) == 1:
                return builders.pop(), path.name
    return None, "default"


def _readthedocs_builder(path: Path) -> str | None:
    try:
        data = yaml.safe_load(_read(path))
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    sphinx = data.get("sphinx")
    if isinstance(sphinx, dict) and isinstance(sphinx.get("builder"), str):
        builder = sphinx["builder"]
        return builder if builder in _PAGE_BUILDERS else None
    build = data.get("build")
    commands: list[str] = []
    if isinstance(build, dict):
        commands.extend(_strings(build.get("commands")))
        commands.extend(_strings(build.get("jobs")))
    builders = _script_builders("\n".join(commands))
    return builders.pop() if len(builders) == 1 else None


def _script_builders(text: str) -> set[str]:
    """The page builders sphinx-build commands in ``text`` name (``-b dirhtml``, ``-M html``)."""
    # Quotes and commas go, so ``session.run("sphinx-build", "-b", "dirhtml")`` reads as a
    # command line too.
    flat = re.sub(r"[\"',\[\]()]", " ", text)
    found = set()
    for match in _BUILDER_RE.finditer(flat):
        if match[1] in _PAGE_BUILDERS and _SPHINX_MENTION_RE.search(
            flat, max(0, match.start() - 300), match.start()
        ):
            found.add(match[1])
    return found


def _strings_of(value: Any) -> tuple[str, ...]:
    if isinstance(value, list | tuple | set):
        return tuple(sorted(v for v in value if isinstance(v, str)))
    return ()


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


# --- MkDocs / Zensical ----------------------------------------------------------------------


def _mkdocs_tree(docs_dir: Path, config_path: Path) -> DocsTree:
    try:
        config = read_site_config(config_path)
    except SourceError:
        return DocsTree(MKDOCS_LAYOUT, docs_dir, docs_dir.parent)
    layout = SiteLayout("mkdocs", config.use_directory_urls, ".html", config_path.name,
                        markdown_extensions=config.markdown_extensions)  # fmt: skip
    excluded = list(_MKDOCS_DEFAULT_EXCLUDES)
    excluded.extend(line.strip() for line in config.exclude_docs.splitlines()
                    if line.strip() and not line.lstrip().startswith("#"))  # fmt: skip
    if config.theme_dir is not None:
        inside = _relative(config.theme_dir, docs_dir)
        if inside is not None:
            excluded.append(f"/{inside}/" if inside else "*")
    bases = tuple(config_path.parent / base for base in config.snippet_bases)
    return DocsTree(layout, docs_dir, config_path.parent, None, tuple(excluded), bases)


def _relative(path: Path, folder: Path) -> str | None:
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix().strip(".")
    except ValueError:
        return None


# --- patterns -------------------------------------------------------------------------------


def _matches(doc_id: str, pattern: str) -> bool:
    """Whether ``doc_id`` matches an exclusion: Sphinx glob (``**`` crosses folders) or a
    gitignore line (MkDocs' ``exclude_docs``: ``/`` anchors it, a trailing ``/`` is a folder,
    ``!`` is not supported and never matches)."""
    if pattern.startswith("!"):
        return False
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    folder = pattern.endswith(("/", "/**"))
    core = pattern.strip("/").removesuffix("/**")
    parts = doc_id.split("/")
    candidates = (
        ["/".join(parts[:i]) for i in range(1, len(parts) + 1)] if anchored else list(parts)
    )
    if folder:
        candidates = candidates[:-1]  # a folder pattern matches the folders above the file
    return any(_glob(candidate, core) for candidate in candidates) or (
        not folder and _glob(doc_id, core)
    )


def _glob(path: str, pattern: str) -> bool:
    regex = ""
    index = 0
    while index < len(pattern):
        if pattern.startswith("**", index):
            regex += ".*"
            index += 2
        elif pattern[index] == "*":
            regex += "[^/]*"
            index += 1
        elif pattern[index] == "?":
            regex += "[^/]"
            index += 1
        else:
            regex += re.escape(pattern[index])
            index += 1
    return re.fullmatch(regex, path) is not None
