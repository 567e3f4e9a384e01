"""Context windows: each hit's text widened with its neighbouring chunks, of its section or page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from citewise.chunking import without_overlap
from citewise.models import Chunk, Hit
from citewise.store.base import KBStore


def expand_hits(store: KBStore, hits: Sequence[Hit], n: int, scope: str = "section") -> list[Hit]:
    """``hits`` with up to ``n`` chunks either side appended, in document order.

    ``scope`` ``section``: only chunks of the hit's own section join (a window never crosses
    a heading); ``page``: the adjacent sections of the same page join too, each chunk with
    its own heading-path line. The heading-path line that starts every chunk of the hit's
    section is kept once. The section's other matching
    chunks (``Hit.also``, from collapsing) join the window too, each with its own
    neighbours. The hit keeps its chunk id, URL and score; only its text grows. ``n`` = 0
    returns the hits unchanged.
    """
    if n <= 0:
        return list(hits)
    expanded = []
    for hit in hits:
        around = {
            chunk.chunk_id: chunk
            for centre in (hit.chunk, *hit.also)
            for chunk in store.neighbours(centre.chunk_id, n)
            if _joins(hit.chunk, chunk, scope)
        }
        window = sorted(around.values(), key=lambda chunk: chunk.position)
        if len(window) > 1:
            hit = replace(hit, chunk=replace(hit.chunk, text=joined_text(window)))
        expanded.append(hit)
    return expanded


def _joins(hit: Chunk, chunk: Chunk, scope: str) -> bool:
    if scope not in ("section", "page"):
        raise ValueError(f"unknown context scope {scope!r} (known: section, page)")
    if chunk.doc_id != hit.doc_id or chunk.page != hit.page:
        return False
    return scope == "page" or chunk.section_index == hit.section_index


def joined_text(chunks: Sequence[Chunk]) -> str:
    """The chunks' texts in order, their shared heading-path line written once."""
    head, sep, _ = chunks[0].text.partition("\n\n")
    prefix = head + sep if sep and "\n" not in head else ""
    bodies = [
        chunk.text[len(prefix) :] if prefix and chunk.text.startswith(prefix) else chunk.text
        for chunk in chunks
    ]
    bodies = [body.strip("\n") for body in bodies]
    # Neighbours of a knowledge base with chunk overlap repeat each other's ends: once here.
    kept = bodies[:1] + [without_overlap(a, b) for a, b in zip(bodies, bodies[1:], strict=False)]
    return prefix + "\n\n".join(kept)
