"""What the sections say, as the grounding check reads it: whole names, contexts, commands.

A name is *held* when it occurs in the sections (or the conversation) as a whole token, never
as a piece of a longer one: ``LGOS_OPENAI_API`` is not held by ``LGOS_OPENAI_API_PREFIX``,
``serve`` is not held by ``langgraph-openai-serve``. Names are read with the identifier
index's tokenizer (:func:`citewise.store.identifiers.name_spans`); words joined by hyphens
(package names, console scripts) are one token, as a shell reads them.

Attributes are names of their own kind. ``settings.OPENAI_API_PREFIX`` holds the path, the
attribute ``OPENAI_API_PREFIX`` (an answer's ``config.OPENAI_API_PREFIX`` or
``.OPENAI_API_PREFIX``) and the head ``settings``; it does not hold a *standalone*
``OPENAI_API_PREFIX``. An all-caps name standing alone in an answer (``OPENAI_API_PREFIX=…``,
``export NAME``, ``$NAME``, "set NAME") reads as an environment variable or constant, a
different claim from the attribute: it must occur standalone in the sections.

A *context* is one place of a section where words belong together: a line of a code block
(continuation lines joined, prompts dropped), a table row, a sentence of prose. Commands,
assignments and imports are checked against contexts (``grounding/units.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cached_property, lru_cache

from citewise.grounding.markdown import FENCE
from citewise.store.identifiers import name_spans

DIAGRAM_LANGUAGES = frozenset({"mermaid", "plantuml", "puml", "dot", "graphviz", "d2"})
ALL_CAPS = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")
# Hyphen-joined words (package names, console scripts, ``kebab-case`` options' values).
HYPHENATED = re.compile(r"(?<![\w.\-/])[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)+(?![\w\-])")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\[(\"'])")
_CLOSING = re.compile(r"[ \t]*(?:```+|~~~+)[ \t]*")
_PROMPT = re.compile(r"^\s*(?:\$|>|%|PS>)\s+")
# Wrappers that run the command after them: ``python -m uvicorn`` is ``uvicorn``.
_RUNNER = re.compile(
    r"(?<![\w\-])(?:python(?:3(?:\.\d+)?)?\s+-m|uv\s+run|poetry\s+run|pipx\s+run|pdm\s+run"
    r"|npx|pnpm\s+exec|sudo|exec)\s+"
)


def normalize_command(line: str) -> str:
    """A command line as compared: prompt, runner prefixes, quotes and spacing removed."""
    line = _PROMPT.sub("", line.strip())
    line = line.split(" #", 1)[0]
    previous = None
    while previous != line:
        previous, line = line, _RUNNER.sub("", line)
    line = line.replace('"', "").replace("'", "")
    return " ".join(line.split())


def shell_words(text: str) -> list[str]:
    """The words of a command line as a shell splits them (trailing punctuation dropped)."""
    return [w.rstrip(".,:;") for w in normalize_command(text).split() if w.rstrip(".,:;")]


@dataclass(frozen=True)
class Context:
    """One line of code, table row or sentence of a section, and its section URL."""

    url: str
    text: str
    code: bool
    diagram: bool = False  # a line of a diagram (Mermaid, PlantUML, Graphviz, D2)

    @cached_property
    def words(self) -> frozenset[str]:
        """Its shell words and names, for "are these parts said together" questions."""
        found = set(shell_words(self.text.replace("`", " ")))
        found |= {name for _, _, name in name_spans(self.text)}
        found |= {m.group(0) for m in HYPHENATED.finditer(self.text)}
        return frozenset(found)


def _unescape(text: str) -> str:
    # Markdown escapes in sources (``CITEWISE\_HOME``) are not part of the name.
    return text.replace("\\_", "_").replace("\\*", "*")


@lru_cache(maxsize=2048)
def contexts_of(url: str, text: str) -> tuple[Context, ...]:
    """The contexts of one section's text, in order (remembered: the same sections come
    back request after request, and a context's words are worked out once)."""
    return tuple(_contexts(url, text))


def _contexts(url: str, text: str) -> Iterator[Context]:
    text = _unescape(text)
    position = 0
    for fence in FENCE.finditer(text):
        yield from _prose_contexts(url, text[position : fence.start()])
        body = fence.group(0).split("\n", 1)[1] if "\n" in fence.group(0) else ""
        lines = [line for line in body.splitlines() if not _CLOSING.fullmatch(line)]
        diagram = fence.group(2).lower() in DIAGRAM_LANGUAGES
        logical = ""
        for line in lines:
            if line.rstrip().endswith("\\"):
                logical += line.rstrip()[:-1] + " "
                continue
            logical += line
            if logical.strip():
                yield Context(url, logical.strip(), True, diagram)
            logical = ""
        if logical.strip():
            yield Context(url, logical.strip(), True, diagram)
        position = fence.end()
    yield from _prose_contexts(url, text[position:])


_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+", re.M)


def _prose_contexts(url: str, text: str) -> Iterator[Context]:
    # Paragraphs, and each list item on its own.
    pieces = re.split(r"\n[ \t]*\n", text)
    for paragraph in (item for piece in pieces for item in _ITEM.split(piece)):
        rows = [line for line in paragraph.splitlines() if line.strip().startswith("|")]
        for row in rows:
            yield Context(url, row.strip(), False)
        prose = " ".join(
            line.strip() for line in paragraph.splitlines() if not line.strip().startswith("|")
        )
        for sentence in _SENTENCE.split(prose):
            if sentence.strip():
                yield Context(url, sentence.strip(), False)


@lru_cache(maxsize=4096)
def _whole(name: str, standalone: bool) -> re.Pattern[str]:
    left = ""
    if name[:1].isalnum() or name[:1] in "_-":
        left = r"(?<![\w\-.])" if standalone else r"(?<![\w\-])"
    right = r"(?![\w])(?!-\w)" if name[-1:].isalnum() or name.endswith("_") else ""
    return re.compile(left + re.escape(name) + right)


@dataclass
class Vocabulary:
    """The names and contexts of the sections (and the conversation) of one answer."""

    texts: list[tuple[str, str]]  # (section URL, text); the conversation's URL is ""
    urls: list[str] = field(default_factory=list)

    @cached_property
    def haystack(self) -> str:
        return "\n".join([_unescape(text) for _, text in self.texts] + self.urls)

    @cached_property
    def contexts(self) -> list[Context]:
        return [c for url, text in self.texts for c in contexts_of(url, text)]

    def holds(self, name: str, *, standalone: bool = False) -> bool:
        """``name`` occurs as a whole token (``standalone``: and not as an attribute)."""
        if not name:
            return True
        if name.startswith(("http://", "https://")):
            return name in self.haystack
        return _whole(name, standalone).search(self.haystack) is not None

    def holds_name(self, name: str, *, attribute: bool = False) -> bool:
        """Whether the sections hold the answer's ``name``: an all-caps name the answer
        writes standing alone must stand alone in the sections too (module docstring)."""
        env_like = ALL_CAPS.fullmatch(name) is not None and "_" in name
        return self.holds(name, standalone=env_like and not attribute)

    @cached_property
    def names(self) -> frozenset[str]:
        """Every identifier-like name of the sections as written: names with an underscore,
        a dot or mixed case, flags, hyphenated words, and the parts of dotted paths."""
        return frozenset().union(*(_names_of(_unescape(text)) for _, text in self.texts))

    def near_miss(self, name: str) -> str:
        """The documented name closest to ``name`` ("" when none is close): one that
        contains it or that it truncates at a word boundary, else one within a small edit
        distance; the same case style first."""
        return closest(name, self.names)

    def together(
        self, words: Iterable[str], first: str = "", ordered: Iterable[str] = ()
    ) -> list[Context]:
        """The contexts that hold every word in ``words`` (and start with ``first``; and
        hold the words of ``ordered`` in that order: a command's positional arguments)."""
        wanted = set(words)
        sequence = list(ordered)
        found = []
        for context in self.contexts:
            if (
                wanted <= context.words
                and (
                    not first
                    or shell_words(context.text.replace("`", " "))[:1] == [first]
                    or _starts_inline(context.text, first)
                )
                and _in_order(sequence, shell_words(context.text.replace("`", " ")))
            ):
                found.append(context)
        return found


def _in_order(sequence: list[str], words: list[str]) -> bool:
    position = 0
    for word in sequence:
        try:
            position = words.index(word, position) + 1
        except ValueError:
            return False
    return True


def _starts_inline(text: str, first: str) -> bool:
    return any(shell_words(span)[:1] == [first] for span in re.findall(r"`([^`]+)`", text))


@lru_cache(maxsize=2048)
def _names_of(text: str) -> frozenset[str]:
    found: set[str] = set()
    for _, _, name in name_spans(text):
        for part in {name, *name.split(".")}:
            if _identifier_like(part):
                found.add(part)
    found |= {m.group(0) for m in HYPHENATED.finditer(text)}
    return frozenset(found)


def _identifier_like(name: str) -> bool:
    return len(name) > 2 and (
        "_" in name or "." in name or name.startswith("-") or _mixed_case(name)
    )


def _mixed_case(name: str) -> bool:
    return any(c.islower() for c in name) and any(c.isupper() for c in name[1:])


_SEPARATORS = re.compile(r"[_.\-]")


def closest(name: str, candidates: Iterable[str]) -> str:
    """The candidate closest to ``name`` by the rules of :meth:`Vocabulary.near_miss`."""
    bare = name.strip("`").rstrip("()")
    if len(bare) < 4:
        return ""
    lower = bare.lower()
    best: tuple[float, str] = (0.0, "")
    for candidate in candidates:
        if candidate == bare:
            continue  # held only in another role (an attribute): look for a sibling
        other = candidate.lower()
        score = 0.0
        if len(other) > len(lower) and _SEPARATORS.search(bare) and _bounded_in(lower, other):
            score = 2.0 + len(lower) / len(other)
        elif abs(len(other) - len(lower)) <= 3:
            ratio = SequenceMatcher(None, lower, other).ratio()
            if ratio >= 0.85:
                score = 1.0 + ratio
        if score and ALL_CAPS.fullmatch(candidate) and ALL_CAPS.fullmatch(bare):
            score += 0.5
        if score > best[0]:
            best = (score, candidate)
    return best[1]


def _bounded_in(part: str, whole: str) -> bool:
    """``part`` is ``whole``'s start or end at a separator (``openai_api_prefix`` in
    ``lgos_openai_api_prefix``; ``lgos_openai_api`` starts it)."""
    if whole.startswith(part) and _SEPARATORS.fullmatch(whole[len(part)]):
        return True
    return whole.endswith(part) and _SEPARATORS.fullmatch(whole[-len(part) - 1]) is not None
