"""One hit per section: fused chunks of one section collapse into its best chunk."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from citewise.models import Chunk, Hit


def section_key(chunk: Chunk) -> tuple[str, int]:
    """The section a chunk belongs to: its document and the section's index in it."""
    return chunk.doc_id, chunk.section_index


def collapse_sections(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` (best first) with each section once, at the rank of its best chunk.

    A long section is cut into several chunks, and a question about it often matches two of
    them: without collapsing, one section takes two places of a top-k and pushes another
    section out. The best chunk stays as the hit; the section's other matching chunks ride
    along in ``Hit.also`` (best first) so a context window can show them, and the hit's
    ``rankers`` are the union of the rankers that found any of them. The order of sections
    and their scores are those of their best chunks, so collapsing never reorders sections.
    """
    kept: dict[tuple[str, int], int] = {}
    out: list[Hit] = []
    extra: list[list[Chunk]] = []
    rankers: list[set[str]] = []
    for hit in hits:
        key = section_key(hit.chunk)
        index = kept.get(key)
        if index is None:
            kept[key] = len(out)
            out.append(hit)
            extra.append(list(hit.also))
            rankers.append(set(hit.rankers))
            continue
        extra[index].extend((hit.chunk, *hit.also))
        rankers[index].update(hit.rankers)
    return [
        _merged(hit, extra[i], rankers[i]) if extra[i] or set(hit.rankers) != rankers[i] else hit
        for i, hit in enumerate(out)
    ]


def _merged(hit: Hit, also: list[Chunk], rankers: set[str]) -> Hit:
    seen = {hit.chunk.chunk_id}
    unique = []
    for chunk in also:
        if chunk.chunk_id not in seen:
            seen.add(chunk.chunk_id)
            unique.append(chunk)
    order = [r for r in hit.rankers] + sorted(rankers - set(hit.rankers))
    return replace(hit, also=tuple(unique), rankers=tuple(order))
