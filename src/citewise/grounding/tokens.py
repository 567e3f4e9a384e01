"""Identifier-like tokens of an answer: the names a docs assistant must never invent.

Inline code, environment variable names, dotted import paths, CLI flags and commands,
function and class names, in prose and in code blocks, and URLs inside code (a URL outside
code is a link: :func:`citewise.grounding.verify.outside_links` checks it). A token is
*supported* when it occurs, as written, in the retrieved sections or the conversation.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterator

from citewise.grounding.markdown import BARE_URL, FENCE, INLINE_CODE, MARKDOWN_LINK
from citewise.grounding.vocabulary import normalize_command

ENV_VAR = re.compile(r"(?<![\w$])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w])")
LONG_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*(?<!-)")
DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w])")
CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\((?!s\))")
SNAKE = re.compile(r"(?<![\w.])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w])")
CAPITALIZED = re.compile(r"(?<![\w.])[A-Z][A-Za-z0-9]+(?![\w])")
IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+)?import\s+([\w., ]+)", re.M)
DEFINED = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)|^\s*(\w+)\s*=", re.M)
# Names a code block binds itself: tuple targets, parameters, loop and ``as`` targets.
BOUND = re.compile(
    r"^[ \t]*([\w \t,*]+?)\s*=(?!=)|\bdef\s+\w+\s*\(([^)]*)\)|\bfor\s+([\w ,]+?)\s+in\b"
    r"|\bas\s+(\w+)|\blambda\s+([\w ,*]*):",
    re.M,
)
# An all-caps name with no underscore is a name only where it is set or read as one
# (``PORT=8000``, ``export PORT``, ``$PORT``); elsewhere in prose it is an acronym.
CAPS_IN_USE = re.compile(
    r"(?:(?<=\$)|(?<=\$\{)|(?<=export )|(?<![\w.$-]))([A-Z][A-Z0-9]+)(?==)"
    r"|(?:(?<=\$)|(?<=\$\{)|(?<=export ))([A-Z][A-Z0-9]+)\b"
)
SHORT_FLAG = re.compile(r"(?:(?<=\s)|(?<=\()|^)-[A-Za-z][A-Za-z0-9]?(?=[\s,.;:)]|$)")
_ASSIGNED_VALUE = re.compile(r"(?<![\w.])([A-Z][A-Z0-9_]*)=(?:\"[^\"]*\"|'[^']*'|\S*)")
_CODE_WORD = re.compile(
    r"https?://[^\s`'\"<>]+|--?[A-Za-z][\w-]*|[A-Za-z_][\w]*(?:[.\-/:][A-Za-z_0-9][\w]*)*"
)
_PLACEHOLDER = re.compile(r"<[^<>\s][^<>]*>")
_SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "console", "zsh", "shell-session"})
_ENV_LANGUAGES = frozenset({"env", "dotenv", "ini", "properties"})

# Dotted words that are prose, not paths.
_PROSE_DOTTED = frozenset({"e.g", "i.e", "a.k.a", "etc", "vs", "cf"})
# Names any Python snippet may use without the docs having to show them.
_BUILTINS = frozenset(dir(builtins))


def camel_case(text: str) -> Iterator[str]:
    """Class-like names: upper case first, mixed case after (``APIKeyMiddleware``,
    ``LangGraph``), not plain capitalized words or acronyms."""
    for match in CAPITALIZED.finditer(text):
        word = match.group(0)
        if any(c.islower() for c in word) and any(c.isupper() for c in word[1:]):
            yield word


def prose_tokens(prose: str) -> Iterator[str]:
    """The identifier-like tokens of text outside code (links already removed)."""
    for pattern in (ENV_VAR, LONG_FLAG, SNAKE, SHORT_FLAG):
        yield from (match.group(0) for match in pattern.finditer(prose))
    for match in CAPS_IN_USE.finditer(prose):
        yield match.group(1) or match.group(2)
    yield from camel_case(prose)
    for match in DOTTED.finditer(prose):
        if match.group(0).lower() not in _PROSE_DOTTED:
            yield match.group(0)
    for match in CALL.finditer(prose):
        yield match.group(1)


_CALL_SPAN = re.compile(r"\s*(?:await\s+)?[A-Za-z_][\w.]*\(.*\)\s*", re.S)
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")


def inline_code_tokens(code: str) -> Iterator[str]:
    """Every name in an inline code span (the span itself when the docs hold it whole is
    checked by the caller first)."""
    # ``NAME=value``: the value is the user's choice or checked with its name as a unit
    # (``grounding/units.py``), not a name of its own.
    code = _ASSIGNED_VALUE.sub(lambda m: m.group(1), code)
    # A call's string arguments (``bind_openai_api(prefix="/api")``) are values, not names.
    if _CALL_SPAN.fullmatch(code):
        code = _STRING.sub(" ", code)
    # ``<api-key>`` is a placeholder, not a name; ``python -m x`` runs ``x``.
    code = normalize_command(_PLACEHOLDER.sub(" ", code))
    for word in _CODE_WORD.findall(code):
        if word.startswith(("http://", "https://")):
            yield word.rstrip(".,;:!?)*_")
        elif len(word) > 1:
            yield word.rstrip(".:/-")


def code_block_tokens(block: str, language: str) -> Iterator[str]:
    """The names a code block relies on: environment variables, dotted paths, flags,
    imported names, classes and called functions; in a shell block, every word of each
    command. Names the block defines itself (``def``, ``class``, assignments) are its own."""
    body = block.split("\n", 1)[1] if "\n" in block else ""
    body = re.sub(r"^[ \t]*(```+|~~~+)[ \t]*$", "", body, flags=re.M)
    yield from (m.group(0).rstrip(".,;:!?") for m in BARE_URL.finditer(body))
    body = BARE_URL.sub(" ", body)
    defined = {name for match in DEFINED.finditer(body) for name in match.groups() if name}
    if language.lower() in _SHELL_LANGUAGES or _looks_like_shell(body):
        yield from _shell_tokens(body)
        return
    if language.lower() in _ENV_LANGUAGES:
        # ``NAME=value`` lines set documented names; they define nothing.
        yield from (m.group(1) for m in _ASSIGNED_VALUE.finditer(body))
        return
    body = _without_strings_and_comments(body)
    bound = defined | _bound_names(body)
    for pattern in (ENV_VAR, LONG_FLAG):
        yield from (m.group(0) for m in pattern.finditer(body) if m.group(0) not in defined)
    for match in SNAKE.finditer(body):
        if match.group(0) not in bound and match.group(0) not in _BUILTINS:
            yield match.group(0)
    yield from (name for name in camel_case(body) if name not in defined | _BUILTINS)
    for match in DOTTED.finditer(body):
        yield match.group(0)
    for match in IMPORT.finditer(body):
        if match.group(1):
            yield match.group(1)
        for name in match.group(2).split(","):
            name = name.strip().split(" as ")[0].strip()
            if name:
                yield name
    for match in CALL.finditer(body):
        name = match.group(1)
        if "." not in name and name not in defined and name not in _BUILTINS:
            yield name


def _bound_names(body: str) -> set[str]:
    found: set[str] = set()
    for match in BOUND.finditer(body):
        for group in match.groups():
            for part in (group or "").split(","):
                name = part.split(":")[0].split("=")[0].strip(" *\t")
                if name.isidentifier():
                    found.add(name)
    return found


def _looks_like_shell(body: str) -> bool:
    lines = [line for line in body.splitlines() if line.strip()]
    return bool(lines) and all(line.lstrip().startswith("$ ") for line in lines)


def _shell_tokens(body: str) -> Iterator[str]:
    for line in body.splitlines():
        line = line.split(" #", 1)[0].strip()
        line = normalize_command(_PLACEHOLDER.sub(" ", line.removeprefix("$ ").strip()))
        if not line or line.startswith("#"):
            continue
        for word in line.split():
            word = word.strip("'\"")
            if (assigned := _ASSIGNED_VALUE.fullmatch(word)) is not None:
                yield assigned.group(1)
                continue
            if any(c in word for c in "<>{}$=\\|&;*\"'") or not word:
                continue
            if re.fullmatch(r"--?[A-Za-z][\w-]*|[A-Za-z_][\w.\-/:\[\],]*", word):
                yield word.rstrip(".,:/")


_STRING_OR_COMMENT = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"[^"\n]*"|\'[^\'\n]*\'|#[^\n]*'
)


def _without_strings_and_comments(code: str) -> str:
    # Words inside strings and comments are prose or placeholders, except an environment
    # variable read by name (environ["X_Y"]) which stays a name to check.
    def keep(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith("#"):
            return " "
        inner = text.strip("\"'")
        return f" {inner} " if ENV_VAR.fullmatch(inner) else " "

    return _STRING_OR_COMMENT.sub(keep, code)


def answer_tokens(text: str) -> Iterator[str]:
    """Every identifier-like token of an answer, in order (repeats included)."""
    position = 0
    for fence in FENCE.finditer(text):
        yield from _prose_and_inline(text[position : fence.start()])
        yield from code_block_tokens(fence.group(0), fence.group(2))
        position = fence.end()
    yield from _prose_and_inline(text[position:])


def _prose_and_inline(text: str) -> Iterator[str]:
    # Links outside code are checked as links (``verify.outside_links``); a URL inside
    # code is a name like any other.
    position = 0
    for code in INLINE_CODE.finditer(text):
        yield from prose_tokens(_prose(text[position : code.start()]))
        yield f"`{code.group(2).strip()}`"
        position = code.end()
    yield from prose_tokens(_prose(text[position:]))


def _prose(text: str) -> str:
    text = MARKDOWN_LINK.sub(lambda m: f" {m.group('text')} ", text)
    return BARE_URL.sub(" ", text)


__all__ = ["answer_tokens", "inline_code_tokens"]
