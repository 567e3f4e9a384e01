"""The docs' own links in a quote: a link outside the retrieved sections that the answer
carries because it quotes the sentence of a section that makes it.

An extractive answer quotes sections with their links (a GitHub repository, a tool's
site). Such a link is the section's, not the answer's: it is grounded when the answer's
block that holds it holds at least half the content words of a sentence of a retrieved
section carrying that link. A link the answer presents in words of its own (an injected
"log in at https://evil.example" restated as advice) shares too few words with the
section's sentence and stays outside.
"""

from __future__ import annotations

from collections.abc import Iterable

from citewise.grounding.markdown import Link, blocks, sentence_around, without_links
from citewise.grounding.overlap import content_words, support

__all__ = ["QUOTE_THRESHOLD", "quotes_its_section"]

QUOTE_THRESHOLD = 0.5
"""The share of the section sentence's content words the answer's block must hold."""
MIN_QUOTED_WORDS = 3
"""A sentence with fewer content words (a bare URL line) is judged as its whole paragraph."""


def quotes_its_section(text: str, link: Link, passages: Iterable[str]) -> bool:
    """Whether the answer's block holding ``link`` quotes a sentence of one of
    ``passages`` (the retrieved sections' texts) that carries the same URL."""
    said = content_words(without_links(_block_around(text, link.start)))
    if not said:
        return False
    for passage in passages:
        for carried in _carrying(passage, link.url):
            if support(carried, said) >= QUOTE_THRESHOLD:
                return True
    return False


def _carrying(passage: str, url: str) -> Iterable[frozenset[str]]:
    """The content words of each sentence of ``passage`` that carries ``url`` (its
    paragraph when the sentence alone says too little)."""
    start = passage.find(url)
    while start >= 0:
        first, last = sentence_around(passage, start, start + len(url))
        words = content_words(without_links(passage[first:last]))
        if len(words) < MIN_QUOTED_WORDS:
            words = content_words(without_links(_block_around(passage, start)))
        if words:
            yield words
        start = passage.find(url, start + len(url))


def _block_around(text: str, index: int) -> str:
    """The paragraph, list item or code block of ``text`` that holds ``index``."""
    return next((b.text for b in blocks(text) if b.start <= index <= b.end), "")
