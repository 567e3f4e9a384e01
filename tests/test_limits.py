"""The size limits: their values and the checks that enforce them."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise import limits
from citewise.errors import SourceError, TooLargeError


def test_limits_are_those_of_the_issue() -> None:
    assert limits.MAX_FILE_BYTES == 16 * 1024 * 1024
    assert limits.MAX_TEXT_BYTES == 4 * 1024 * 1024
    assert limits.MAX_UNPACKED_BYTES >= limits.MAX_FILE_BYTES


def test_file_size_check_is_inclusive_and_names_the_file() -> None:
    limits.check_file_size("a.pdf", limits.MAX_FILE_BYTES)
    with pytest.raises(TooLargeError, match=r"^a\.pdf: file is more than the 16\.0 MiB limit"):
        limits.check_file_size("a.pdf", limits.MAX_FILE_BYTES + 1)
    assert issubclass(TooLargeError, SourceError)


def test_text_size_is_counted_in_utf8_bytes_across_sections() -> None:
    half = "é" * (limits.MAX_TEXT_BYTES // 4)  # two bytes each: half the limit
    limits.check_text_size("a.txt", [half, half])
    with pytest.raises(TooLargeError, match=r"^a\.txt: parsed text is over the 4\.0 MiB limit"):
        limits.check_text_size("a.txt", [half, half, "x"])


def test_small_limits_read_in_bytes_and_kib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 2048)
    with pytest.raises(TooLargeError, match=r"file is 3\.0 KiB, over the 2\.0 KiB limit"):
        limits.check_file_size("b.docx", 3072)


def test_a_document_with_too_many_sections_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citewise.parsing.source import parse_file
    from citewise.sources import SourceFile

    # The page's h1 and 59,999 sections under it.
    text = "# Many\n\n" + "".join("## Same\n\nbody\n\n" for _ in range(59_999))
    source = SourceFile("many.md", tmp_path / "many.md", text)
    with pytest.raises(TooLargeError, match=r"many\.md: 60,000 sections, over the limit of 50,000"):
        parse_file(source)
    monkeypatch.setenv("CITEWISE_MAX_SECTIONS", "100000")
    assert len(parse_file(source)) == 60_000
