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
from citewise.grounding.verify import BLOCK_THRESHOLD, CITATION_THRESHOLD, verify
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
    cited = attribute(text, hits, citations)
    return cited, verify(text, hits, conversation, cited, mode=mode)


def warning(verification: Verification) -> str:
    """The visible note ``verify=warn`` appends to an answer that failed the check ("" if
    it passed)."""
    problems = []
    if verification.unsupported:
        names = ", ".join(f"`{token.strip('`')}`" for token in verification.unsupported[:8])
        problems.append(f"names not found in the documentation sections: {names}")
    if verification.outside_links:
        problems.append(
            f"links outside the retrieved sections: {', '.join(verification.outside_links[:5])}"
        )
    weak = [c.url for c in verification.citations if not c.supported]
    if weak:
        problems.append(
            f"citations the cited section does not clearly support: {', '.join(weak[:5])}"
        )
    if not problems:
        return ""
    return "\n\n> **Check this answer:** " + "; ".join(problems) + "."


def regenerate_instruction(verification: Verification) -> str:
    """What the one regeneration is told: the problems of the first answer, by name."""
    lines = [
        "Your previous answer used names or links that the documentation sections do not contain."
    ]
    if verification.unsupported:
        names = ", ".join(token.strip("`") for token in verification.unsupported)
        lines.append(f"Not found in the sections: {names}.")
    if verification.outside_links:
        lines.append(f"Links to no retrieved section: {', '.join(verification.outside_links)}.")
    lines.append(
        "Answer again using only names, commands, settings and URLs that appear in the "
        "sections; if the sections do not say, say so instead of guessing."
    )
    return " ".join(lines)
