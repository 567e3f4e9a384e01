"""Chunk overlap as a knowledge-base setting, through `citewise kb create|show` and `doc add`."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.config import Settings
from citewise.kb import KnowledgeBase

from .support import fail, run, run_json

PARAGRAPHS = [
    f"Paragraph {n} explains setting number {n} of the proxy and how it interacts with the "
    f"cache, the retry policy and the timeout called t{n}."
    for n in range(40)
]


def add_long_guide(home: Path, capsys: pytest.CaptureFixture[str], kb: str) -> None:
    guide = home / "guide.md"
    guide.write_text("# Guide\n\n## Settings\n\n" + "\n\n".join(PARAGRAPHS) + "\n")
    run(capsys, "doc", "add", str(guide), "--kb", kb)


def chunk_texts(home: Path, kb: str) -> list[str]:
    handle = KnowledgeBase(kb, settings=Settings(home=home / "home")).store
    chunks = sorted(handle.get(sorted(handle.chunk_ids())), key=lambda c: c.position)
    return [chunk.text.split("\n\n", 1)[1] for chunk in chunks if "\n\n" in chunk.text]


@pytest.mark.parametrize(("size", "unit"), [("300", "chars"), ("40", "tokens")])
def test_an_overlap_repeats_each_chunks_end_and_kb_show_reports_it(
    home: Path, capsys: pytest.CaptureFixture[str], size: str, unit: str
) -> None:
    created = run_json(
        capsys, "kb", "create", "team", "--parent-chars", "1000",
        "--chunk-overlap", size, "--overlap-unit", unit, "--json",
    )  # fmt: skip
    assert (created["chunk_overlap"], created["chunk_overlap_unit"]) == (int(size), unit)
    shown = run(capsys, "kb", "show", "team")
    assert f"chunk_overlap      {size}\n" in shown and f"chunk_overlap_unit {unit}\n" in shown
    add_long_guide(home, capsys, "team")
    texts = chunk_texts(home, "team")
    assert len(texts) > 3 and all(len(t) <= 1000 for t in texts)
    for before, after in zip(texts, texts[1:], strict=False):
        # Each chunk starts with the previous one's end: about ``size`` of it, whole words.
        repeated = max(k for k in range(len(after) + 1) if before.endswith(after[:k]))
        assert 150 <= repeated <= 300
        assert after[repeated:].startswith("\n\nParagraph")
    # The document read back has each paragraph once, not once per chunk that repeats it.
    text = KnowledgeBase("team", settings=Settings(home=home / "home")).document_text("guide.md")
    assert text is not None
    assert all(text.count(paragraph) == 1 for paragraph in PARAGRAPHS)


def test_no_overlap_by_default(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    created = run_json(capsys, "kb", "create", "team", "--parent-chars", "1000", "--json")
    assert (created["chunk_overlap"], created["chunk_overlap_unit"]) == (0, "chars")
    add_long_guide(home, capsys, "team")
    texts = chunk_texts(home, "team")
    assert [p for t in texts for p in t.split("\n\n")] == PARAGRAPHS


def test_an_overlap_over_half_a_chunk_is_refused(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = fail(capsys, "kb", "create", "team", "--parent-chars", "1000", "--chunk-overlap", "600")
    assert "chunk overlap must be 0..500" in error
    assert run_json(capsys, "kb", "list", "--json") == []
