"""Test doubles shared by the workflow tests: hits and a retriever that records its searches."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from citewise.models import Chunk, Hit
from citewise.options import SearchOptions

SITE = "https://docs.example/1.0/"


def make_hit(page: str, anchor: str, text: str, *, title: str = "", score: float = 1.0) -> Hit:
    """A hit on section ``anchor`` of ``page``, its chunk text prefixed with the heading path."""
    heading = (title or page.strip("/").title(), anchor.replace("-", " ").title())
    chunk = Chunk(
        chunk_id=f"{page}#{anchor}",
        doc_id=f"{page.strip('/')}.md",
        position=0,
        section_index=0,
        text=f"{' > '.join(heading)}\n\n{text}",
        title=heading[0],
        heading_path=heading,
        anchor=anchor,
        url=f"{SITE}{page}#{anchor}",
        page=page,
    )
    return Hit(chunk, score, ("dense", "keyword"))


INSTALL = make_hit("guide/", "install", "Install it with `pip install example`.")
CONFIGURE = make_hit("guide/", "configure", "Set EXAMPLE_KEY in the environment.")
LOGGING = make_hit("ops/", "logging", "Request IDs appear in every log line.")


@dataclass
class FakeRetriever:
    """Returns ``results(query)`` for each search and records every call (thread-safe):
    ``(query, top_k, search_type, scope)`` of the options it was given."""

    results: Callable[[str], Sequence[Hit]] = lambda query: [INSTALL, CONFIGURE]
    calls: list[tuple[str, int, str, str | None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    async def asearch(self, query: str, options: SearchOptions) -> list[Hit]:
        with self._lock:
            self.calls.append((query, options.top_k, options.search_type, options.scope))
        return list(self.results(query))[: options.top_k]

    @property
    def queries(self) -> list[str]:
        return [call[0] for call in self.calls]
