"""Lexical support: the share of a text's content words that a section also uses.

Words are lowercased runs of letters, digits and underscores, without common English
function words, with a plural ``s`` dropped, so "keys" in an answer meets "key" in a
section. The measure is deliberately simple and fast: it runs on every answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[a-z0-9_]+")

STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers him his how i if in into is it its
    itself just let like may me might more most must my no nor not now of off on once only
    or other our ours out over own same shall she should so some such than that the their
    them then there these they this those through to too under until up upon us use used
    uses using very via was we were what when where which while who whom why will with
    would you your yours yes see e g i.e eg etc one two set get""".split()
)


def content_words(text: str) -> frozenset[str]:
    """The distinct content words of ``text`` (see the module docstring)."""
    return frozenset(_normal(word) for word in _WORD.findall(text.lower()) if _keep(word))


def _keep(word: str) -> bool:
    return word not in STOPWORDS and (len(word) > 2 or word.isdigit())


def _normal(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


def support(words: frozenset[str], section: frozenset[str]) -> float:
    """The share of ``words`` found in ``section`` (1.0 for no words: nothing to support)."""
    if not words:
        return 1.0
    return len(words & section) / len(words)


def union(texts: Iterable[str]) -> frozenset[str]:
    """The content words of several texts together."""
    found: set[str] = set()
    for text in texts:
        found |= content_words(text)
    return frozenset(found)
