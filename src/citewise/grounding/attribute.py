"""Citations citewise adds itself when a model cites less than it claims.

Small local models often write no link at all. Each claim (paragraph, list item, code block)
that no citation falls in is matched to the retrieved section whose content words cover it
best; at or over ``BLOCK_THRESHOLD`` it gets a ``url_citation`` over the whole block, marked
``attributed``. A claim no section supports stays uncited (the verification reports it).
"""

from __future__ import annotations

from collections.abc import Sequence

from citewise.grounding.markdown import without_links
from citewise.grounding.overlap import content_words
from citewise.grounding.verify import BLOCK_THRESHOLD, Sources, claims
from citewise.models import Citation, Hit


def _title(hit: Hit) -> str:
    return " › ".join(hit.chunk.heading_path) or hit.chunk.title


def attribute(
    text: str, hits: Sequence[Hit], citations: Sequence[Citation] = ()
) -> tuple[Citation, ...]:
    """``citations`` plus an attributed one for each uncited claim a section supports,
    in text order; unchanged when there are at least as many citations as claims."""
    blocks = claims(text)
    if not hits or len(citations) >= len(blocks):
        return tuple(citations)
    sources = Sources(hits)
    titles = {hit.url: _title(hit) for hit in reversed(hits)}
    added: list[Citation] = []
    for block in blocks:
        if any(block.start <= c.start_index < block.end for c in citations):
            continue
        url, score = sources.best_section(content_words(without_links(block.text)))
        if url is not None and score >= BLOCK_THRESHOLD:
            added.append(Citation(url, titles[url], block.start, block.end, attributed=True))
    return tuple(sorted([*citations, *added], key=lambda c: (c.start_index, c.end_index)))
