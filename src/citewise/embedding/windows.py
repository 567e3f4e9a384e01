"""Split a chunk into overlapping windows that fit the embedding model, each with its headings."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

# Character spans of a text's tokens, in order, without the model's special tokens.
TokenSpans = Callable[[str], Sequence[tuple[int, int]]]

# Strongest first: a window should end at a paragraph break rather than mid-sentence.
_CUT_BREAKS = (
    re.compile(r"\n[ \t]*\n"),
    re.compile(r"\n"),
    re.compile(r"(?<=[.!?;:])\s"),
    re.compile(r"\s"),
)
# Measured on SciFact and the LGOS dev cases (benchmarks/latency.md): an eighth of the window.
OVERLAP_FRACTION = 8


@runtime_checkable
class TokenWindowed(Protocol):
    """An embedder that can count its own tokens: its windows are cut by tokens, not characters."""

    window_tokens: int

    def token_spans(self, text: str) -> Sequence[tuple[int, int]]: ...


class _CutCache(Protocol):
    """What ``windows_for_many`` needs of a window cache (``embedding/window_cache.py``)."""

    def settings_id(self, embedder: object) -> str: ...

    def windows(
        self, settings: str, texts: Sequence[str], cut: Callable[[str], list[str]]
    ) -> list[list[str]]: ...


def windows_for(embedder: object, text: str, window_chars: int | None = None) -> list[str]:
    """The windows ``embedder`` embeds for a chunk's ``text``.

    By the embedder's tokens when it can count them (``TokenWindowed``) and no smaller
    ``window_chars`` is asked for (a parent/child strategy's child size); else by characters.
    """
    by_tokens = _by_tokens(embedder, window_chars)
    if by_tokens is not None:
        size, spans_of = by_tokens
        return token_windows(text, spans_of, size, size // OVERLAP_FRACTION)
    return embedding_windows(text, window_chars or int(getattr(embedder, "window_chars", 0) or 0))


def windows_for_many(
    embedder: object, texts: Sequence[str], window_chars: int | None = None
) -> list[list[str]]:
    """``windows_for`` of each text; token windows come from the embedder's ``window_cache``
    when it has one (a ``CachedEmbedder``): text cut before is not tokenized again."""
    cache: _CutCache | None = getattr(embedder, "window_cache", None)
    if cache is None or _by_tokens(embedder, window_chars) is None:
        # Character windows cost no tokenizer: nothing worth caching.
        return [windows_for(embedder, text, window_chars) for text in texts]
    return cache.windows(
        cache.settings_id(embedder), texts, lambda text: windows_for(embedder, text, window_chars)
    )


def _by_tokens(embedder: object, window_chars: int | None) -> tuple[int, TokenSpans] | None:
    """The embedder's window size in tokens and its tokenizer, if windows are cut by tokens."""
    # What isinstance(embedder, TokenWindowed) checks, without its cost per chunk.
    size = getattr(embedder, "window_tokens", None)
    spans_of = getattr(embedder, "token_spans", None)
    if size is None or spans_of is None:
        return None
    own_chars = int(getattr(embedder, "window_chars", 0) or 0)
    if window_chars is not None and window_chars < own_chars:
        return None
    return int(size), spans_of


_SENTENCE_START = re.compile(r"\n|(?<=[.!?;:])\s")
_WORD_START = re.compile(r"\s")


def embedding_windows(text: str, window_chars: int, overlap_chars: int | None = None) -> list[str]:
    """Split ``text`` into windows of at most ``window_chars`` characters.

    A chunk's text starts with its heading-path line (``A > B``) and a blank line; every
    window repeats that line so the model knows where each piece belongs. Windows end at
    the strongest boundary in their second half (paragraph, line, sentence, word) and the
    next one starts about ``overlap_chars`` earlier (default a fifth of the window) at a
    sentence or word start. A text that fits is returned unchanged as ``[text]``.
    """
    if window_chars < 1:
        raise ValueError("window_chars must be positive")
    if len(text) <= window_chars:
        return [text]
    heading, body = _split_heading(text, lambda line: len(line) <= window_chars // 3)
    prefix = f"{heading}\n\n" if heading else ""
    budget = window_chars - len(prefix)
    overlap = window_chars // 5 if overlap_chars is None else overlap_chars
    overlap = max(0, min(overlap, budget // 2))

    windows: list[str] = []
    start, end = 0, len(body)
    while start < end:
        stop = end if end - start <= budget else _cut(body, start, start + budget)
        piece = body[start:stop].strip()
        if piece:
            windows.append(prefix + piece)
        if stop >= end:
            break
        start = _resume(body, max(start + 1, stop - overlap), stop)
    return windows or [text[:window_chars]]


def _split_heading(text: str, short: Callable[[str], bool]) -> tuple[str, str]:
    """``(heading path, body)`` of a chunk's text; ``("", text)`` when it has none, or when
    its first line is not ``short`` (at most a third of a window, in the caller's unit)."""
    first, sep, rest = text.partition("\n\n")
    heading = first.strip()
    # A long or multi-line first block is body text, not a heading path: repeating it
    # in every window would crowd out the text the window exists for.
    if sep and heading and "\n" not in heading and short(heading):
        return heading, rest
    return "", text


def _cut(body: str, start: int, limit: int) -> int:
    """Where a window starting at ``start`` ends: at most ``limit``, at a clean boundary."""
    low = start + (limit - start) // 2
    for pattern in _CUT_BREAKS:
        last = None
        for match in pattern.finditer(body, low, limit + 1):
            last = match
        if last is not None and last.start() > start:
            return last.start()
    return limit  # one word longer than the window: cutting it is unavoidable


def _resume(body: str, low: int, stop: int) -> int:
    """Where the next window starts: the earliest sentence (else word) start in the overlap."""
    if low >= stop:
        return stop
    for pattern in (_SENTENCE_START, _WORD_START):
        match = pattern.search(body, low, stop)
        if match is not None:
            return match.end()
    return low


def token_windows(
    text: str, spans_of: TokenSpans, max_tokens: int, overlap_tokens: int
) -> list[str]:
    """Split ``text`` into windows of at most ``max_tokens`` of the model's tokens.

    The rules of :func:`embedding_windows` (the heading line repeated, cuts at the strongest
    boundary in a window's second half, the next window starting about ``overlap_tokens``
    earlier), counted in tokens: a model that reads 256 tokens sees all of every window and
    no window is shorter than it needs to be. ``max_tokens`` excludes the model's special
    tokens ([CLS], [SEP]).
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be positive")
    spans = list(spans_of(text))
    if len(spans) <= max_tokens:
        return [text]
    # The text is tokenized once: no token spans the blank line after the heading (the
    # tokenizer splits at whitespace), so the heading's tokens are those before it and the
    # body's those after, shifted. Tokenizing each part again gave the same spans, at twice
    # the cost of a build whose vectors are all cached (benchmarks/peers.md).
    first, sep, _ = text.partition("\n\n")
    heading_tokens = bisect_right([b for _, b in spans], len(first))
    heading, body = _split_heading(text, lambda _line: heading_tokens <= max_tokens // 3)
    prefix = f"{heading}\n\n" if heading else ""
    if heading:
        offset = len(first) + len(sep)
        spans = [(a - offset, b - offset) for a, b in spans[heading_tokens:]]
    budget = max_tokens - (heading_tokens if heading else 0)
    overlap = max(0, min(overlap_tokens, budget // 2))
    starts = [a for a, _ in spans]
    ends = [b for _, b in spans]

    windows: list[str] = []
    start, end = 0, len(body)
    while start < end:
        first_token = bisect_left(ends, start + 1)  # the first token ending after ``start``
        last_token = first_token + budget - 1
        if last_token >= len(spans):
            stop = end
        else:
            stop = _cut(body, start, ends[last_token])
        piece = body[start:stop].strip()
        if piece:
            windows.append(prefix + piece)
        if stop >= end:
            break
        back = max(first_token + 1, bisect_right(starts, stop) - overlap)
        start = _resume(body, max(start + 1, min(starts[min(back, len(starts) - 1)], stop)), stop)
    return windows or [text]
