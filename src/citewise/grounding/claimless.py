"""What part of an answer block the block check can judge: closing and small-talk sentences
make no checkable claim, and a block in another language is judged by its code only."""

from __future__ import annotations

import re

from citewise.grounding.markdown import INLINE_CODE

# Openings of sentences that close, summarise or make small talk rather than state a fact
# ("In summary, …", "Feel free to ask …", "You're welcome!"); such a sentence repeats or
# frames the answer, so the sections are not expected to hold its words.
_CLOSING = re.compile(
    r"(?:in summary|to summari[sz]e|in short|overall|in conclusion|that'?s it|"
    r"this way|this setup|with this setup|i hope|hope this helps|feel free|"
    r"you'?re welcome|let me know|if you have any|happy coding|good luck|i'?m glad|"
    r"glad (?:it|to|that))\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[^\W\d_]+")
# Common English function words: a block whose running words have almost none of them is
# written in another language, where word overlap with English sections means nothing.
_ENGLISH = frozenset(
    "the a an is are was be to of and or in on for with you your it this that can by as "
    "from at not if use run set then will do does should".split()
)
# Function words of other languages the docs' readers write in (German, French, Spanish,
# Italian, Portuguese, Dutch): a short English sentence may lack English ones ("Tokyo has
# about 14 million inhabitants."), so another language is told by its own.
_OTHER = frozenset(
    "der die das den dem des und ist mit ein eine einen nicht zu für auf wie ich du sie "
    "le la les et est une des pour dans avec sur que qui pas el los las y es con para por "
    "una il che di della per sono het een van niet voor zijn também não com uma".split()
)
ENGLISH_SHARE = 0.1
"""A text is in another language when under this share of its words are English function
words and at least this share are another language's (English scores near 0.3)."""


def checkable_text(text: str) -> str:
    """``text`` without its closing and small-talk sentences (one with inline code stays:
    it names something that can be checked)."""
    kept = [
        sentence
        for sentence in _SENTENCE.split(text.strip())
        if not (_CLOSING.match(sentence.lstrip("*_ ")) and not INLINE_CODE.search(sentence))
    ]
    return " ".join(kept)


def is_english(text: str) -> bool:
    """Whether ``text`` reads as English (or as no language the check knows)."""
    words = _WORD.findall(INLINE_CODE.sub(" ", text).lower())
    if not words:
        return True
    english = sum(word in _ENGLISH for word in words)
    other = sum(word in _OTHER for word in words)
    return english >= ENGLISH_SHARE * len(words) or other < ENGLISH_SHARE * len(words)


def code_text(text: str) -> str:
    """The inline code of ``text``: what a block in another language can be checked by."""
    return " ".join(match.group(2) for match in INLINE_CODE.finditer(text))
