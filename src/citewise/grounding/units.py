"""Commands, installs, ``NAME=value`` assignments and imports checked as units, not word by word.

Every word of ``lgos-demo-api --reload`` may occur in the sections while the command does
not: a unit is supported when it occurs in a section (normalized: prompt, quotes, spacing,
``python -m``/``uv run`` wrappers), or when all its parts occur in one context of a section
(a code line, table row or sentence: :mod:`citewise.grounding.vocabulary`). A unit whose
parts each occur, but never together, is reported as a recombination.

- Installs: each package must be installed with a manager of the same ecosystem somewhere
  in the sections or the conversation (pip, uv, poetry, pipx, pdm for PyPI; npm, yarn,
  pnpm, bun for npm; …), with extras the sections show; or named beside its registry.
- Assignments: a boolean or word value must be the one the sections give the name (a
  number, path or URL is the user's own choice).
- Imports: each imported name must be imported from that module in the sections, or its
  dotted path ``module.name`` occur.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from citewise.grounding.markdown import FENCE, INLINE_CODE, sentence_around
from citewise.grounding.vocabulary import ALL_CAPS, Vocabulary, normalize_command, shell_words
from citewise.models import Problem

SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "console", "zsh", "shell-session", "fish"})
ENV_LANGUAGES = frozenset({"env", "dotenv", "ini", "properties", "conf"})
MANAGERS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("uv", "pip", "install"), "PyPI"),
    (("pip", "install"), "PyPI"),
    (("pip3", "install"), "PyPI"),
    (("uv", "add"), "PyPI"),
    (("poetry", "add"), "PyPI"),
    (("pipx", "install"), "PyPI"),
    (("pdm", "add"), "PyPI"),
    (("rye", "add"), "PyPI"),
    (("conda", "install"), "conda"),
    (("mamba", "install"), "conda"),
    (("npm", "install"), "npm"),
    (("npm", "i"), "npm"),
    (("npm", "add"), "npm"),
    (("yarn", "add"), "npm"),
    (("pnpm", "add"), "npm"),
    (("pnpm", "install"), "npm"),
    (("pnpm", "i"), "npm"),
    (("bun", "add"), "npm"),
    (("bun", "install"), "npm"),
    (("cargo", "add"), "crates"),
    (("cargo", "install"), "crates"),
    (("go", "get"), "Go modules"),
    (("go", "install"), "Go modules"),
    (("gem", "install"), "RubyGems"),
    (("bundle", "add"), "RubyGems"),
    (("composer", "require"), "Packagist"),
    (("dotnet", "add", "package"), "NuGet"),
    (("brew", "install"), "Homebrew"),
    (("apt", "install"), "apt"),
    (("apt-get", "install"), "apt"),
)
# Words a registry goes by in prose ("published on PyPI").
REGISTRY_WORDS = {"PyPI": ("pypi",), "npm": ("npm",), "crates": ("crates.io",)}
# Options of install commands that take a value (the value is no package).
_VALUED_OPTIONS = frozenset(
    "-r --requirement -c --constraint -i --index-url --extra-index-url -f --find-links "
    "-t --target --prefix --group --optional -G --registry --python -p".split()
)
BOOLEAN = frozenset("true false yes no on off enabled disabled none null".split())
_ASSIGNMENT = re.compile(
    r"(?<![\w.$-])(?:export\s+)?([A-Z][A-Z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s`]*)"
)
_SOURCE_ASSIGNMENT = re.compile(
    r"(?<![\w.$-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\s*(?:=|:)\s*(\"[^\"]*\"|'[^']*'|[^\s`,;|]+)"
)
_IMPORT = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]+)", re.M)
_PLACEHOLDER = re.compile(r"<[^>]*>|\{[^}]*\}|\$\w+|\.\.\.|\[[^\]]*\]$")
_PROGRAM = re.compile(r"[a-z][\w.\-]*")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)
_PYTHON_WORDS = frozenset("from import def class return if for while with async await".split())


@dataclass(frozen=True)
class Unit:
    """A command line, assignment or import of the answer, and the span it is judged by
    (the sentence around an inline one, the lead-in paragraph of a code block)."""

    kind: str  # "command" | "assignment" | "import"
    text: str
    lead_in: str = ""


def answer_units(text: str) -> list[Unit]:
    """The answer's units in order: code block lines, inline code spans, prose assignments."""
    found: list[Unit] = []
    position = 0
    text = _QUOTE.sub("", text)  # a quoted passage is read as its text
    for fence in FENCE.finditer(text):
        found += _prose_units(text, position, fence.start())
        lead_in = _lead_in(text[position : fence.start()])
        found += _block_units(fence.group(0), fence.group(2).lower(), lead_in)
        position = fence.end()
    found += _prose_units(text, position, len(text))
    return found


def _lead_in(before: str) -> str:
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", before) if p.strip()]
    return paragraphs[-1] if paragraphs else ""


def _block_units(block: str, language: str, lead_in: str) -> Iterator[Unit]:
    body = block.split("\n", 1)[1] if "\n" in block else ""
    lines = [line for line in body.splitlines() if not re.fullmatch(r"\s*(```+|~~~+)\s*", line)]
    if language in SHELL_LANGUAGES or (
        lines and all(ln.lstrip().startswith("$ ") for ln in lines if ln.strip())
    ):
        logical = ""
        for line in lines:
            if line.rstrip().endswith("\\"):
                logical += line.rstrip()[:-1] + " "
                continue
            logical += line
            yield from _command_units(logical, lead_in)
            logical = ""
        yield from _command_units(logical, lead_in)
        return
    if language in ENV_LANGUAGES:
        for line in lines:
            yield from (Unit("assignment", m.group(0), lead_in) for m in _ASSIGNMENT.finditer(line))
        return
    for match in _IMPORT.finditer(body):
        yield Unit("import", match.group(0).strip(), lead_in)


def _command_units(line: str, lead_in: str) -> Iterator[Unit]:
    line = line.split(" #", 1)[0].strip()
    if not line or line.startswith("#"):
        return
    for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line):
        words = part.split()
        while words and _ASSIGNMENT.fullmatch(words[0].removeprefix("export ")):
            yield Unit("assignment", words.pop(0), lead_in)
        if words and words[0] == "export":
            yield from (Unit("assignment", w, lead_in) for w in words[1:] if "=" in w)
            continue
        if len(words) >= 2:
            yield Unit("command", " ".join(words), lead_in)


def _prose_units(text: str, start: int, end: int) -> Iterator[Unit]:
    for code in INLINE_CODE.finditer(text, start, end):
        span = code.group(2).strip()
        first, last = sentence_around(text, code.start(), code.end())
        sentence = text[first:last]
        if _ASSIGNMENT.fullmatch(span.removeprefix("export ")):
            yield Unit("assignment", span.removeprefix("export "), sentence)
        elif span.startswith(("from ", "import ")):
            yield Unit("import", span, sentence)
        elif _looks_like_command(span):
            yield from _command_units(span, sentence)
    prose = INLINE_CODE.sub(" ", text[start:end])
    for match in _ASSIGNMENT.finditer(prose):
        if match.group(2):
            yield Unit("assignment", match.group(0), "")


def _looks_like_command(span: str) -> bool:
    words = span.removeprefix("$ ").split()
    return (
        len(words) >= 2
        and _PROGRAM.fullmatch(words[0]) is not None
        and words[0] not in _PYTHON_WORDS
        and not any(c in span for c in "()=")
    )


@dataclass
class _Installs:
    """The packages the sections install: (ecosystem, name) -> extras seen."""

    vocabulary: Vocabulary

    @cached_property
    def installed(self) -> dict[tuple[str, str], set[str]]:
        found: dict[tuple[str, str], set[str]] = {}
        for context in self.vocabulary.contexts:
            lines = [context.text] if context.code else re.findall(r"`([^`]+)`", context.text)
            for line in lines:
                for ecosystem, package in packages(line):
                    name, extras = _split_extras(package, ecosystem)
                    found.setdefault((ecosystem, name), set()).update(extras)
        return found


def known_manager(program: str, vocabulary: Vocabulary) -> bool:
    """``program`` is a package manager of an ecosystem the sections install from: ``poetry``
    is as good as the ``pip`` the docs show (the package is checked by :func:`check_units`)."""
    ecosystems = {eco for words, eco in MANAGERS if words[0] == program}
    return bool(ecosystems) and any(eco in ecosystems for eco, _ in _installs(vocabulary).installed)


def _installs(vocabulary: Vocabulary) -> _Installs:
    cached = vocabulary.__dict__.get("_installs")
    if cached is None:
        cached = vocabulary.__dict__["_installs"] = _Installs(vocabulary)
    return cached


def packages(line: str) -> Iterator[tuple[str, str]]:
    """The (ecosystem, package as written) pairs an install command line names."""
    words = shell_words(line)
    for index in range(len(words)):
        for prefix, ecosystem in MANAGERS:
            if tuple(words[index : index + len(prefix)]) != prefix:
                continue
            skip = False
            for word in words[index + len(prefix) :]:
                if skip:
                    skip = False
                elif word.startswith("-"):
                    skip = word in _VALUED_OPTIONS
                elif word in {"&&", "||", ";", "|"}:
                    break
                elif not _is_path_or_url(word):
                    yield ecosystem, word
            return


def _is_path_or_url(word: str) -> bool:
    return (
        word in {".", ".."}
        or word.startswith((".", "/", "~", "git+", "http://", "https://", "file:"))
        or word.endswith((".txt", ".whl", ".tar.gz", ".toml"))
        or ("/" in word and not word.startswith("@"))
    )


def _split_extras(package: str, ecosystem: str) -> tuple[str, set[str]]:
    package = package.strip("\"'")
    if ecosystem == "npm":
        name = re.sub(r"(?<=.)@[^/]*$", "", package)
        return name.lower(), set()
    match = re.match(r"([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[([^\]]*)\])?", package)
    if not match:
        return package.lower(), set()
    name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
    extras = {e.strip().lower() for e in (match.group(2) or "").split(",") if e.strip()}
    return name, extras


def check_units(text: str, vocabulary: Vocabulary) -> list[Problem]:
    """The answer's units the sections do not support (see the module docstring)."""
    installs = _installs(vocabulary)
    problems: list[Problem] = []
    for unit in answer_units(text):
        if unit.kind == "command":
            problems += _check_command(unit, vocabulary, installs)
        elif unit.kind == "assignment":
            problems += _check_assignment(unit, vocabulary)
        else:
            problems += _check_import(unit, vocabulary)
    return list({(p.kind, p.text): p for p in problems}.values())


def _normalized_haystack(vocabulary: Vocabulary) -> str:
    return "\n".join(normalize_command(c.text.replace("`", " ")) for c in vocabulary.contexts)


def _check_command(unit: Unit, vocabulary: Vocabulary, installs: _Installs) -> list[Problem]:
    line = normalize_command(unit.text)
    found = list(packages(line))
    if found:
        return [
            p
            for ecosystem, package in found
            for p in _check_package(unit, ecosystem, package, vocabulary, installs)
        ]
    if re.search(
        r"(?<![\w\-])" + re.escape(line) + r"(?![\w\-])", _normalized_haystack(vocabulary)
    ):
        return []
    words = [w for w in shell_words(line) if not _PLACEHOLDER.fullmatch(w) and not w.isdigit()]
    if not words or not vocabulary.together([words[0]], first=words[0]):
        return []  # not a program the sections run: its words are checked as names
    if not all(vocabulary.holds(w) for w in words):
        return []  # a word the sections lack is reported as an unsupported name
    positional = [w for w in words[1:] if not w.startswith("-")]
    if vocabulary.together(words, first=words[0], ordered=positional):
        return []
    return [
        Problem(
            "command",
            unit.text,
            f"the sections use {', '.join(f'`{w}`' for w in words)} but never in one command",
        )
    ]


def _check_package(
    unit: Unit, ecosystem: str, package: str, vocabulary: Vocabulary, installs: _Installs
) -> list[Problem]:
    name, extras = _split_extras(package, ecosystem)
    documented = installs.installed.get((ecosystem, name))
    if documented is not None:
        if extras <= documented:
            return []
        shown = ", ".join(sorted(documented)) or "none"
        return [
            Problem(
                "package",
                unit.text,
                f"the sections show no extra {', '.join(sorted(extras - documented))} for "
                f"`{name}` (extras shown: {shown})",
            )
        ]
    elsewhere = sorted(eco for eco, other in installs.installed if other == name)
    if elsewhere:
        return [
            Problem(
                "package",
                unit.text,
                f"the sections install `{name}` from {', '.join(elsewhere)}, not {ecosystem}",
            )
        ]
    words = REGISTRY_WORDS.get(ecosystem, ())
    for context in vocabulary.contexts:
        lower = context.text.lower()
        if name in lower.replace("_", "-") and any(w in lower for w in words):
            return []
    return [Problem("package", unit.text, f"the sections never install `{name}` from {ecosystem}")]


@dataclass
class _Assignments:
    vocabulary: Vocabulary

    @cached_property
    def values(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for context in self.vocabulary.contexts:
            for match in _SOURCE_ASSIGNMENT.finditer(context.text.replace("`", " ")):
                found.setdefault(match.group(1), set()).add(_value(match.group(2)))
        return found


def _value(raw: str) -> str:
    return raw.strip().strip("\"'").rstrip(".,;").lower()


def _check_assignment(unit: Unit, vocabulary: Vocabulary) -> list[Problem]:
    match = _ASSIGNMENT.search(unit.text)
    if not match or not vocabulary.holds_name(match.group(1)):
        return []  # an unknown name is reported as an unsupported name
    name, value = match.group(1), _value(match.group(2))
    if not value or not re.fullmatch(r"[a-z][a-z_\-]*", value):
        return []  # a number, path, URL or placeholder: the user's own value
    shown = _Assignments(vocabulary).values.get(name, set())
    if value in shown:
        return []
    if value not in BOOLEAN and vocabulary.together([name, value]):
        return []
    others = ", ".join(f"`{name}={v}`" for v in sorted(shown))
    detail = (
        f"the sections show {others}" if others else f"the sections never set `{name}` to `{value}`"
    )
    return [Problem("assignment", unit.text, detail)]


def _check_import(unit: Unit, vocabulary: Vocabulary) -> list[Problem]:
    match = _IMPORT.match(unit.text)
    if not match:
        return []
    module = match.group(1)
    names = [n.strip().split(" as ")[0].strip() for n in match.group(2).strip("() \n").split(",")]
    if not vocabulary.holds(module):
        return []  # an unknown module is reported as an unsupported name
    imported = _source_imports(vocabulary)
    problems = []
    for name in (n for n in names if n and n != "*"):
        if name in imported.get(module, set()) or vocabulary.holds(f"{module}.{name}"):
            continue
        if not vocabulary.holds(name):
            continue  # reported as an unsupported name
        sources = sorted(m for m, found in imported.items() if name in found)
        where = f"; they import it from {', '.join(f'`{m}`' for m in sources)}" if sources else ""
        problems.append(
            Problem(
                "import",
                f"from {module} import {name}",
                f"the sections never import `{name}` from `{module}`{where}",
                sources[0] if sources else "",
            )
        )
    return problems


def _source_imports(vocabulary: Vocabulary) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for match in _IMPORT.finditer(vocabulary.haystack):
        names = match.group(2).strip("() \n").split(",")
        found.setdefault(match.group(1), set()).update(
            n.strip().split(" as ")[0].strip() for n in names
        )
    return found


__all__ = ["ALL_CAPS", "Unit", "answer_units", "check_units", "known_manager", "packages"]
