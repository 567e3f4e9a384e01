"""Chunk overlap: each chunk of a split section repeats the end of the one before, in
characters or tokens, within the size limit, never a code fence; joined back once."""

from __future__ import annotations

import pytest

from citewise.chunking import Overlap, chunk_sections, without_overlap
from citewise.models import Section


def section(text: str) -> Section:
    return Section("d.md", "D", ("D", "S"), 2, "s", "https://x/d/#s", "d/", text)


def bodies(text: str, max_chars: int, overlap: Overlap) -> list[str]:
    return [c.text.split("\n\n", 1)[1] for c in chunk_sections([section(text)], max_chars, overlap)]


def test_a_token_overlap_counts_cjk_characters_one_by_one() -> None:
    text = "\n\n".join("检索增强生成把文档切成块然后按相似度排序。" * 3 for _ in range(16))
    pieces = bodies(text, 300, Overlap(5, "tokens"))
    assert len(pieces) > 2
    for before, after in zip(pieces, pieces[1:], strict=False):
        head = after.split("\n\n", 1)[0]
        assert len(head) == 5 and before.endswith(head)


def test_the_end_of_a_code_block_is_not_repeated() -> None:
    code = "```python\n" + "\n".join(f"value_{n} = {n}" for n in range(60)) + "\n```"
    pieces = bodies(f"Intro words here.\n\n{code}\n\nAfter the code.", 400, Overlap(100))
    assert all(piece.count("```") % 2 == 0 for piece in pieces)


@pytest.mark.parametrize("overlap", [Overlap(120), Overlap(25, "tokens")])
def test_chunks_joined_without_their_overlap_give_the_section_back(overlap: Overlap) -> None:
    text = "\n\n".join(f"Sentence {n} about the cache and the proxy timeout." for n in range(50))
    pieces = bodies(text, 500, overlap)
    assert all(len(f"D > S\n\n{p}") <= 500 for p in pieces)
    joined = [pieces[0]] + [without_overlap(a, b) for a, b in zip(pieces, pieces[1:], strict=False)]
    assert "\n\n".join(joined) == text


def test_a_short_shared_edge_is_not_taken_for_an_overlap() -> None:
    assert without_overlap("ends with ```", "``` opens") == "``` opens"
    with pytest.raises(ValueError, match="overlap unit"):
        Overlap(3, "lines")
