"""Grounded answers: the deterministic check run on every answer, and attributed citations.

::

    from citewise.grounding import verify

    result = verify(answer.text, answer.hits, conversation, answer.citations)
    result.unsupported      # names found in no section and not in the conversation
    result.outside_links    # links to no retrieved section
    result.ok               # none of those, and every citation supported

:func:`ground` is what the workflow runs: attribution (when the model cited less than it
claimed), then :func:`verify`, under the request's ``verify`` option.
"""

from __future__ import annotations

from collections.abc import Sequence

from citewise.grounding.attribute import attribute
from citewise.grounding.notes import regenerate_instruction, warning
from citewise.grounding.verify import BLOCK_THRESHOLD, CITATION_THRESHOLD, Sources, check, verify
from citewise.models import Citation, CitationSupport, Hit, Verification

__all__ = [
    "BLOCK_THRESHOLD",
    "CITATION_THRESHOLD",
    "CitationSupport",
    "Verification",
    "attribute",
    "ground",
    "regenerate_instruction",
    "verify",
    "warning",
]


def ground(
    text: str,
    hits: Sequence[Hit],
    conversation: str = "",
    citations: Sequence[Citation] = (),
    *,
    mode: str = "report",
) -> tuple[tuple[Citation, ...], Verification | None]:
    """The answer's citations with attributed ones added, and its verification (None when
    ``mode`` is ``off``: nothing is checked or added)."""
    if mode == "off":
        return tuple(citations), None
    sources = Sources(hits, conversation)
    cited = attribute(text, hits, citations, sources=sources)
    return cited, check(text, sources, cited, mode=mode)
