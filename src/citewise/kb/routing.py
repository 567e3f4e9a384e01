"""Routing without a model: which knowledge base(s) a question goes to.

A question that names libraries (by any alias of their cards, in any spelling: ``LGOS``,
``langgraph_openai_serve``) goes to those. A name that is also an English word (``requests``,
``click``: a whole word of the embedder's vocabulary) counts only where it is used as a
name: capitalised mid-sentence, in backticks or quotes, as a dotted path (``requests.get``),
after ``import``/``pip install``, before ``library``/``package``/``'s``, or after a
preposition at the end of a clause (``… with requests?``, ``in requests and …``). A question
naming none goes to the library whose nearest chunk scores highest, and to a second one
when its score is within :data:`SECOND_MARGIN` (unless the question holds its name only as
a plain word: that word, not the topic, brings it near).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

from citewise.kb.catalog import Card, normalized

__all__ = ["NEAREST", "SECOND_MARGIN", "Route", "is_word", "named_libraries", "route"]

# How many nearest chunks score a library (their mean cosine), and how close a second
# library must come. One chunk routed the dev questions best (19/19; 3 chunks: 17/19).
NEAREST = 1
SECOND_MARGIN = 0.015

_BEFORE_NAME = re.compile(r"(?:\bimport|\bpip install|\bpython-|`|[\"'])\s*$", re.IGNORECASE)
_AFTER_NAME = re.compile(
    r"^(?:\.[A-Za-z_]|\(|`|[\"']|'s\b|\s+(?:library|package|module|docs|documentation|project|"
    r"api|version|v?\d))",
    re.IGNORECASE,
)
_PREPOSITION = re.compile(
    r"\b(?:in|with|using|via|from|does|do|vs\.?|versus|of|for)\s+$", re.IGNORECASE
)
_CLAUSE_END = re.compile(
    r"^(?:\s*(?:$|[?!.,;:)])|\s+(?:and|or|but|to|support|supports|handle|handles|keep|keeps|"
    r"use|uses|work|works|set|sets|do|does)\b)",
    re.IGNORECASE,
)
_SENTENCE_START = re.compile(r"(?:^|[.?!:]\s+|\n\s*)$")


@dataclass(frozen=True)
class Route:
    """Where a question goes: knowledge base names, best first, and how they were chosen
    (``named``: the question names them; ``nearest``: their chunks are nearest; ``asked``:
    the request or the plan named them; ``only``: there is one)."""

    names: tuple[str, ...]
    how: str
    scores: dict[str, float] = field(default_factory=dict)


@cache
def _vocabulary() -> frozenset[str]:
    from citewise.embedding.minilm import VOCAB_PATH

    words = VOCAB_PATH.read_text(encoding="utf-8").split()
    return frozenset(word for word in words if word.isalpha() and len(word) > 2)


def is_word(name: str) -> bool:
    """True when ``name`` is an English word (a whole word of the embedder's vocabulary),
    so naming it in a question may not mean the library."""
    return name.lower() in _vocabulary()


def _alias_pattern(alias: str) -> re.Pattern[str]:
    parts = [re.escape(part) for part in normalized(alias).split("-") if part]
    return re.compile(r"(?<![\w\-])" + r"[\s\-_.]?".join(parts) + r"(?![\w\-])", re.IGNORECASE)


def _used_as_name(question: str, start: int, end: int) -> bool:
    """Whether the common word at ``question[start:end]`` names the library there."""
    before, after, text = question[:start], question[end:], question[start:end]
    if text != text.lower() and not _SENTENCE_START.search(before):
        return True  # "Requests" mid-sentence
    if _BEFORE_NAME.search(before) or _AFTER_NAME.match(after):
        return True
    return bool(_PREPOSITION.search(before) and _CLAUSE_END.match(after))


def _mentions(question: str, cards: Sequence[Card]) -> tuple[list[str], set[str]]:
    """The knowledge bases ``question`` names (in the order it names them), and those whose
    name is in it only as a plain word (``how many requests per second``)."""
    found: dict[str, int] = {}
    as_word: set[str] = set()
    for card in cards:
        for alias in card.aliases:
            common = is_word(alias)
            for match in _alias_pattern(alias).finditer(question):
                if common and not _used_as_name(question, match.start(), match.end()):
                    as_word.add(card.name)
                    continue
                found[card.name] = min(found.get(card.name, match.start()), match.start())
                break
    return sorted(found, key=found.__getitem__), as_word - set(found)


def named_libraries(question: str, cards: Sequence[Card]) -> list[str]:
    """The knowledge bases ``question`` names, in the order it names them."""
    return _mentions(question, cards)[0]


Scorer = Callable[[str, str], float]


def route(question: str, cards: Sequence[Card], nearest: Scorer) -> Route:
    """The knowledge bases for ``question``: those it names, else the nearest one (and a
    second within :data:`SECOND_MARGIN`). ``nearest(kb, question)`` scores a library by its
    nearest chunks."""
    if len(cards) == 1:
        return Route((cards[0].name,), "only")
    named, as_word = _mentions(question, cards)
    if named:
        return Route(tuple(named), "named")
    scores = {card.name: nearest(card.name, question) for card in cards}
    ranked = sorted(scores, key=lambda name: -scores[name])
    if not ranked:
        return Route((), "nearest", scores)
    chosen = [ranked[0]]
    # A library whose name is in the question as a plain word is nearer for that word
    # alone: never the second one.
    if (
        len(ranked) > 1
        and ranked[1] not in as_word
        and scores[ranked[0]] - scores[ranked[1]] <= SECOND_MARGIN
    ):
        chosen.append(ranked[1])
    return Route(tuple(chosen), "nearest", scores)
