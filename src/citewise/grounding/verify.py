"""The deterministic grounding check that runs on every answer: names, links and citations.

:func:`verify` reads an answer against the sections it was written from (and the
conversation) and reports what they do not support: identifier-like tokens found nowhere in
them, links that point at no retrieved section, citations whose section shares too few words
with the sentence they are attached to, and blocks no section supports. It is plain string
work, a few milliseconds per answer (``citewise bench verify``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from citewise.grounding.markdown import (
    Block,
    blocks,
    links,
    sentence_around,
    without_links,
)
from citewise.grounding.overlap import content_words, support, union
from citewise.grounding.tokens import answer_tokens, inline_code_tokens
from citewise.models import Citation, CitationSupport, Hit, Verification

CITATION_THRESHOLD = 0.3
"""A citation is supported when its section holds this share of its sentence's content
words (measured on the LGOS dev cases: see ``benchmarks/verify.md``)."""
BLOCK_THRESHOLD = 0.5
"""A block is supported (and may be cited by attribution) when one section holds this
share of its content words (``benchmarks/verify.md``)."""
MIN_SENTENCE_WORDS = 4
"""A sentence with fewer content words ("See [Install](…).") is judged with its block."""
MIN_CLAIM_WORDS = 5
"""A block with fewer content words (a greeting, a lead-in) makes no claim to support."""


@dataclass(frozen=True)
class Sources:
    """The retrieved sections and the conversation, prepared once per answer."""

    hits: Sequence[Hit]
    conversation: str = ""

    @cached_property
    def haystack(self) -> str:
        parts = [hit.chunk.text for hit in self.hits] + [hit.url for hit in self.hits]
        # Markdown escapes in sources (``CITEWISE\_HOME``) are not part of the name.
        return "\n".join([*parts, self.conversation]).replace("\\_", "_").replace("\\*", "*")

    @cached_property
    def section_words(self) -> dict[str, frozenset[str]]:
        """The content words of each retrieved section URL (its chunks together)."""
        texts: dict[str, list[str]] = {}
        for hit in self.hits:
            texts.setdefault(hit.url, []).append(hit.chunk.text)
        return {url: union(parts) for url, parts in texts.items()}

    @cached_property
    def pages(self) -> frozenset[str]:
        return frozenset(hit.url.partition("#")[0] for hit in self.hits)

    def holds(self, token: str) -> bool:
        return token in self.haystack

    def is_section(self, url: str) -> bool:
        return url in self.section_words or url.partition("#")[0] in self.pages

    def best_section(self, words: frozenset[str]) -> tuple[str | None, float]:
        """The section URL that supports ``words`` best, and its support."""
        best: tuple[str | None, float] = (None, 0.0)
        for url, section in self.section_words.items():
            score = support(words, section)
            if score > best[1]:
                best = (url, score)
        return best


def unsupported_tokens(text: str, sources: Sources) -> tuple[str, ...]:
    """The answer's identifier-like tokens that the sources do not hold, each once."""
    missing: dict[str, None] = {}
    for token in answer_tokens(text):
        if token.startswith("`") and token.endswith("`") and len(token) > 1:
            span = token[1:-1]
            if sources.holds(span):
                continue
            for word in inline_code_tokens(span):
                if not _held(word, sources):
                    missing[word] = None
        elif not _held(token, sources):
            missing[token] = None
    return tuple(missing)


def _held(token: str, sources: Sources) -> bool:
    if sources.holds(token) or token.split(".")[0] in sys.stdlib_module_names:
        return True
    # ``app.add_middleware``: the receiver is the answer's own variable; the attribute
    # path after it is what the docs must show.
    head, dot, rest = token.partition(".")
    return bool(dot) and head[:1].islower() and sources.holds(f".{rest}")


def outside_links(text: str, sources: Sources) -> tuple[str, ...]:
    """Links in the answer that point at no retrieved section (nor its page), each once."""
    found = (link.url for link in links(text) if not sources.is_section(link.url))
    return tuple(dict.fromkeys(found))


def citation_support(text: str, citation: Citation, sources: Sources) -> CitationSupport:
    """How well the cited section supports the sentence (or, for a short sentence or an
    attributed citation, the block) the citation is attached to."""
    if citation.attributed:
        span = (citation.start_index, citation.end_index)
    else:
        span = sentence_around(text, citation.start_index, citation.end_index)
        words = content_words(without_links(text[span[0] : span[1]]))
        if len(words) < MIN_SENTENCE_WORDS:
            span = _block_span(text, citation.start_index)
    words = content_words(without_links(text[span[0] : span[1]]))
    section = sources.section_words.get(citation.url)
    score = support(words, section) if section is not None else 0.0
    return CitationSupport(
        url=citation.url,
        start_index=citation.start_index,
        end_index=citation.end_index,
        score=score,
        supported=section is not None and score >= CITATION_THRESHOLD,
        attributed=citation.attributed,
    )


def _block_span(text: str, index: int) -> tuple[int, int]:
    """The block holding ``index``, joined with the block before it when that is all it
    is (a "Source: [link]" line cites the paragraph above)."""
    found = blocks(text)
    for number, block in enumerate(found):
        if block.start <= index <= block.end:
            if number and len(content_words(without_links(block.text))) < MIN_SENTENCE_WORDS:
                return found[number - 1].start, block.end
            return block.start, block.end
    return 0, len(text)


def claims(text: str) -> list[Block]:
    """The blocks that make a claim: paragraphs, list items and code blocks with enough
    content words (headings and one-line lead-ins do not)."""
    return [
        block
        for block in blocks(text)
        if block.kind != "heading"
        and len(content_words(without_links(block.text))) >= MIN_CLAIM_WORDS
    ]


def unsupported_blocks(text: str, sources: Sources) -> tuple[str, ...]:
    """The first words of each claim no retrieved section supports (none without hits)."""
    if not sources.hits:
        return ()
    found = []
    for block in claims(text):
        words = content_words(without_links(block.text))
        if sources.best_section(words)[1] < BLOCK_THRESHOLD:
            found.append(_excerpt(block.text))
    return tuple(found)


def _excerpt(text: str, size: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"


def verify(
    text: str,
    hits: Sequence[Hit],
    conversation: str = "",
    citations: Sequence[Citation] = (),
    *,
    mode: str = "report",
) -> Verification:
    """Check ``text`` against the sections it was written from and the conversation.

    Args:
        text: the answer.
        hits: the retrieved sections the answer call saw.
        conversation: the conversation's text (names the user wrote are supported).
        citations: the answer's ``url_citation`` annotations (attributed ones included).
        mode: the ``verify`` option the check runs under (recorded in the result).
    """
    sources = Sources(hits, conversation)
    supports = tuple(citation_support(text, c, sources) for c in citations)
    return Verification(
        unsupported=unsupported_tokens(text, sources),
        outside_links=outside_links(text, sources),
        citations=supports,
        attributed=sum(1 for c in citations if c.attributed),
        unsupported_blocks=unsupported_blocks(text, sources),
        mode=mode,
    )
