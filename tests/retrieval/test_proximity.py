"""Best-sentence coverage: the chunk whose one sentence says what was asked comes first."""

from __future__ import annotations

from citewise.models import Chunk
from citewise.retrieval.proximity import sentence_coverage


def chunk(text: str) -> Chunk:
    return Chunk(text[:8], "d.md", 0, 0, f"Docs > Part\n\n{text}", "Part", ("Docs", "Part"),
                 "part", "d/#part", "d/")  # fmt: skip


def test_one_sentence_holding_the_question_beats_scattered_words() -> None:
    answer = chunk("A longer section is split between blocks. Each chunk has an id.")
    scattered = chunk("Split the config.\n\nSections are listed.\n\nA long list follows.")
    flags = chunk("- `--split` `SPLIT`: the split to read (default: test)")
    scores = sentence_coverage("How does citewise split long sections?", [flags, scattered, answer])
    assert scores[2] > scores[1] > 0 and scores[2] > scores[0]
    assert 0 < scores[2] <= 1


def test_heading_path_and_stop_words_do_not_count() -> None:
    [score] = sentence_coverage("docs part", [chunk("Nothing relevant here.")])
    assert score == 0
    assert sentence_coverage("how", [chunk("how it works")]) == [0.0]
    assert sentence_coverage("anything at all", []) == []


def test_only_questions_are_questions() -> None:
    from citewise.retrieval.proximity import is_question

    assert is_question("How does citewise split long sections?")
    assert is_question("Does the cache expire")
    assert is_question("缓存多久过期？")
    assert not is_question("0-dimensional biomaterials show inductive properties.")
    assert not is_question("ValueError: k must be >= 0")
