"""Citations citewise adds itself when a model cites less than it claims.

Small local models often write no link at all. Each claim (paragraph, list item, code block)
that no citation falls in is matched to the retrieved section whose content words cover it
best; at or over ``BLOCK_THRESHOLD`` it gets a ``url_citation`` over the whole block, marked
``attributed``, unless that section contradicts it (``grounding/contradiction.py``). A claim
no section supports stays uncited (the verification reports it).
"""

from __future__ import annotations

from collections.abc import Sequence

from citewise.grounding import contradiction
from citewise.grounding.markdown import blocks, outside_links_text, without_links
from citewise.grounding.overlap import content_words
from citewise.grounding.verify import BLOCK_THRESHOLD, MIN_SENTENCE_WORDS, Sources, claims
from citewise.models import Citation, Hit


def _title(hit: Hit) -> str:
    return " › ".join(hit.chunk.heading_path) or hit.chunk.title


def _cited(text: str, citations: Sequence[Citation]) -> set[tuple[int, int]]:
    """The spans of blocks a citation covers: the block it is in, and for a citation on a
    short line of its own ("**[Heading](…)**" over a quote, "Source: […](…)" under a
    paragraph) the blocks just before and after that line."""
    found = blocks(text)
    cited: set[tuple[int, int]] = set()
    for number, block in enumerate(found):
        if not any(block.start <= c.start_index < block.end for c in citations):
            continue
        cited.add((block.start, block.end))
        if len(content_words(outside_links_text(block.text))) < MIN_SENTENCE_WORDS:
            for near in found[max(number - 1, 0) : number + 2]:
                cited.add((near.start, near.end))
    return cited


def attribute(
    text: str,
    hits: Sequence[Hit],
    citations: Sequence[Citation] = (),
    *,
    sources: Sources | None = None,
) -> tuple[Citation, ...]:
    """``citations`` plus an attributed one for each uncited claim a section supports,
    in text order; unchanged when there are at least as many citations as claims.
    ``sources``: ``hits`` already prepared (by :func:`citewise.grounding.ground`)."""
    found = claims(text)
    if not hits or len(citations) >= len(found):
        return tuple(citations)
    sources = sources or Sources(hits)
    titles = {hit.url: _title(hit) for hit in reversed(hits)}
    cited = _cited(text, citations)
    added: list[Citation] = []
    for block in found:
        if (block.start, block.end) in cited:
            continue
        url, score = sources.best_section(content_words(without_links(block.text)))
        # A section that says the opposite of the block shares its words, not its claim.
        if (
            url is not None
            and score >= BLOCK_THRESHOLD
            and not contradiction.find(block.text, sources.vocabulary, frozenset({url}))
        ):
            added.append(Citation(url, titles[url], block.start, block.end, attributed=True))
    return tuple(sorted([*citations, *added], key=lambda c: (c.start_index, c.end_index)))
