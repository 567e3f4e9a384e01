"""Tests for splitting chunks into embedding windows."""

from __future__ import annotations

import re

import pytest

from citewise.embedding import embedding_windows
from citewise.embedding.windows import TokenSpans

HEADING = "Run The Server > Settings"


def paragraphs(count: int, sentences: int = 6) -> str:
    return "\n\n".join(
        " ".join(
            f"Paragraph {p} sentence {s} explains one setting in detail." for s in range(sentences)
        )
        for p in range(count)
    )


def test_text_that_fits_is_returned_unchanged() -> None:
    text = f"{HEADING}\n\nShort body.  "
    assert embedding_windows(text, 700) == [text]


def test_every_window_fits_and_starts_with_the_heading() -> None:
    text = f"{HEADING}\n\n{paragraphs(8)}"
    windows = embedding_windows(text, 700)
    assert len(windows) > 3
    for window in windows:
        assert len(window) <= 700
        assert window.startswith(f"{HEADING}\n\n")
        assert not window[len(HEADING) + 2 :].startswith((" ", "\n"))


def test_windows_cover_the_whole_body_with_overlap() -> None:
    body = paragraphs(8)
    windows = embedding_windows(f"{HEADING}\n\n{body}", 600)
    bodies = [w.removeprefix(f"{HEADING}\n\n") for w in windows]
    for sentence in re.findall(r"Paragraph \d+ sentence \d+", body):
        assert any(sentence in b for b in bodies), sentence
    # Consecutive windows share text (about a fifth of the window).
    for left, right in zip(bodies, bodies[1:], strict=False):
        shared = right[:40]
        assert shared in left


def test_windows_break_at_sentence_or_paragraph_ends() -> None:
    windows = embedding_windows(f"{HEADING}\n\n{paragraphs(6)}", 500)
    for window in windows[:-1]:
        assert window.endswith("."), window[-30:]


def test_never_breaks_mid_word_when_words_fit() -> None:
    words = [f"word{i:04d}" for i in range(600)]
    body = " ".join(words)
    windows = embedding_windows(f"{HEADING}\n\n{body}", 300, overlap_chars=50)
    known = set(words)
    for window in windows:
        assert len(window) <= 300
        assert set(window.removeprefix(f"{HEADING}\n\n").split()) <= known
    assert words[-1] in windows[-1]


def test_line_breaks_preferred_over_word_breaks() -> None:
    lines = "\n".join(f"- item {i} with a short description" for i in range(60))
    for window in embedding_windows(f"{HEADING}\n\n{lines}", 400):
        assert window.endswith("description")
        assert window.removeprefix(f"{HEADING}\n\n").startswith("- item")


def test_an_overlong_word_is_cut() -> None:
    windows = embedding_windows(f"{HEADING}\n\n" + "x" * 2000, 500)
    assert all(len(w) <= 500 for w in windows)
    assert sum(w.count("x") for w in windows) >= 2000


def test_text_without_a_heading_line_gets_no_prefix() -> None:
    body = paragraphs(5)
    windows = embedding_windows(body, 500)
    assert windows[0].startswith("Paragraph 0 sentence 0")
    assert not all(w.startswith("Paragraph 0 sentence 0") for w in windows)


def test_zero_overlap_gives_disjoint_windows() -> None:
    words = [f"w{i}" for i in range(400)]
    windows = embedding_windows(f"{HEADING}\n\n" + " ".join(words), 200, overlap_chars=0)
    seen = [t for w in windows for t in w.removeprefix(f"{HEADING}\n\n").split()]
    assert seen == words


def test_rejects_a_nonpositive_window() -> None:
    with pytest.raises(ValueError):
        embedding_windows("text", 0)


def test_minilm_windows_fill_what_the_model_reads_and_never_exceed_it() -> None:
    from citewise.embedding.minilm import MAX_TOKENS, MiniLMEmbedder
    from citewise.embedding.windows import windows_for

    embedder = MiniLMEmbedder()
    text = f"{HEADING}\n\n{paragraphs(12)}\n\nEnvironmentVariableNamesLikeCITEWISE_HOME_DIRECTORY."
    windows = windows_for(embedder, text)
    counts = [len(ids) for ids in embedder.token_ids(windows)]
    # Nothing is cut off by the model's truncation, and windows are not needlessly short.
    full = [len(embedder.token_spans(w)) + 2 for w in windows]
    assert counts == full and max(full) <= MAX_TOKENS
    assert min(full[:-1]) > MAX_TOKENS // 2
    assert all(w.startswith(f"{HEADING}\n\n") for w in windows)
    assert windows[-1].endswith("CITEWISE_HOME_DIRECTORY.")
    # Fewer windows than by characters: each one holds more of the text.
    assert len(windows) < len(embedding_windows(text, embedder.window_chars))
    short = f"{HEADING}\n\nShort body."
    assert windows_for(embedder, short) == [short]


def _windows_tokenizing_each_part(
    text: str, spans_of: TokenSpans, max_tokens: int, overlap: int
) -> list[str]:
    """The windows as cut before the text was tokenized once: the heading and the body each
    tokenized again on their own (the reference the single pass must reproduce)."""
    from bisect import bisect_left, bisect_right

    from citewise.embedding.windows import _cut, _resume, _split_heading

    spans = list(spans_of(text))
    if len(spans) <= max_tokens:
        return [text]
    heading, body = _split_heading(text, lambda line: len(spans_of(line)) <= max_tokens // 3)
    prefix = f"{heading}\n\n" if heading else ""
    if heading:
        spans = list(spans_of(body))
    budget = max_tokens - (len(spans_of(heading)) if heading else 0)
    overlap = max(0, min(overlap, budget // 2))
    starts, ends = [a for a, _ in spans], [b for _, b in spans]
    windows: list[str] = []
    start, end = 0, len(body)
    while start < end:
        first_token = bisect_left(ends, start + 1)
        last_token = first_token + budget - 1
        stop = end if last_token >= len(spans) else _cut(body, start, ends[last_token])
        piece = body[start:stop].strip()
        if piece:
            windows.append(prefix + piece)
        if stop >= end:
            break
        back = max(first_token + 1, bisect_right(starts, stop) - overlap)
        start = _resume(body, max(start + 1, min(starts[min(back, len(starts) - 1)], stop)), stop)
    return windows or [text]


WINDOW_TEXTS = [
    f"{HEADING}\n\n{paragraphs(12)}",
    f"  {HEADING}  \n\n{paragraphs(9, 11)}",  # a heading line with spaces around it
    f"Résumé > Übersicht — naïve café\n\n{paragraphs(7)} 日本語のテキスト。" * 3,
    f"Heading\x1f with a control character\n\n\u0301{paragraphs(8)}",  # body opens on an accent
    f"{'Very long heading words ' * 12}\n\n{paragraphs(10)}",  # too long to be a heading
    "no heading at all " * 300,
    "A > B\n\n```python\ndef foo(x: int) -> str:\n    return f'{x!r}'\n```\n\n" * 40,
    f"A > B\n\n{'x' * 150} {paragraphs(6)}",  # an overlong word: one [UNK] token
    f"A > B\n\nfirst line\nsecond\n\n\n\n{paragraphs(8)}",
]


@pytest.mark.parametrize("text", WINDOW_TEXTS)
def test_minilm_token_windows_tokenize_each_chunk_once_and_cut_as_before(text: str) -> None:
    from citewise.embedding.minilm import MiniLMEmbedder
    from citewise.embedding.windows import OVERLAP_FRACTION, token_windows

    embedder = MiniLMEmbedder()
    calls: list[str] = []

    def counted(piece: str) -> list[tuple[int, int]]:
        calls.append(piece)
        return embedder.token_spans(piece)

    size = embedder.window_tokens
    windows = token_windows(text, counted, size, size // OVERLAP_FRACTION)
    assert calls == [text]
    expected = _windows_tokenizing_each_part(
        text, embedder.token_spans, size, size // OVERLAP_FRACTION
    )
    assert windows == expected and len(windows) > 1
