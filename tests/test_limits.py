"""The size limits: their values, the checks that enforce them, and the settings they come from."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from citewise.config import Limits, ParseSettings
from citewise.errors import SourceError, TooLargeError
from citewise.limits import (
    check_file_size,
    check_section_count,
    check_table_shape,
    check_text_size,
    check_zip_members,
    read_limited,
)

MIB = 1024 * 1024
DEFAULT = Limits()


def test_limits_are_those_of_the_issue() -> None:
    assert DEFAULT.max_file_bytes == 16 * MIB
    assert DEFAULT.max_text_bytes == 4 * MIB
    assert DEFAULT.max_unpacked_bytes == 4 * DEFAULT.max_file_bytes
    assert (DEFAULT.max_sections, DEFAULT.max_pdf_pages, DEFAULT.max_ocr_pages) == (
        50_000, 2000, 200,
    )  # fmt: skip


def test_limits_are_frozen_values() -> None:
    with pytest.raises(AttributeError):
        DEFAULT.max_file_bytes = 1  # type: ignore[misc]
    # The unpacked limit follows the file limit unless it is given.
    assert Limits(max_file_bytes=1000).max_unpacked_bytes == 4000
    assert Limits(max_file_bytes=1000, max_unpacked_bytes=1500).max_unpacked_bytes == 1500
    assert pickle.loads(pickle.dumps(Limits(max_file_bytes=1000))) == Limits(max_file_bytes=1000)


def test_file_size_check_is_inclusive_and_names_the_file() -> None:
    check_file_size(DEFAULT, "a.pdf", DEFAULT.max_file_bytes)
    with pytest.raises(TooLargeError, match=r"^a\.pdf: file is more than the 16\.0 MiB limit"):
        check_file_size(DEFAULT, "a.pdf", DEFAULT.max_file_bytes + 1)
    assert issubclass(TooLargeError, SourceError)


def test_text_size_is_counted_in_utf8_bytes_across_sections() -> None:
    half = "é" * (DEFAULT.max_text_bytes // 4)  # two bytes each: half the limit
    check_text_size(DEFAULT, "a.txt", [half, half])
    with pytest.raises(TooLargeError, match=r"^a\.txt: parsed text is over the 4\.0 MiB limit"):
        check_text_size(DEFAULT, "a.txt", [half, half, "x"])


def test_small_limits_read_in_bytes_and_kib() -> None:
    small = Limits(max_file_bytes=2048)
    check_file_size(small, "b.docx", 2048)
    with pytest.raises(TooLargeError, match=r"file is 3\.0 KiB, over the 2\.0 KiB limit"):
        check_file_size(small, "b.docx", 3072)
    check_file_size(DEFAULT, "b.docx", 3072)  # the same file within the default limit


def test_each_check_reads_the_limits_it_is_given() -> None:
    tight = Limits(max_table_columns=3, max_table_cells=10, max_sections=2, max_zip_ratio=2)
    check_table_shape(DEFAULT, "t.csv", 4, 11)
    with pytest.raises(TooLargeError, match=r"4 columns, over the limit of 3"):
        check_table_shape(tight, "t.csv", 4, 4)
    with pytest.raises(TooLargeError, match=r"11 cells, over the limit of 10"):
        check_table_shape(tight, "t.csv", 3, 11)
    check_section_count(DEFAULT, "s.md", 3)
    with pytest.raises(TooLargeError, match=r"s\.md: 3 sections, over the limit of 2"):
        check_section_count(tight, "s.md", 3)
    member = [("word/document.xml", MIB, 3 * MIB)]
    check_zip_members(DEFAULT, "z.docx", member)
    with pytest.raises(TooLargeError, match=r"expands 3 times .* over the limit of 2 times"):
        check_zip_members(tight, "z.docx", member)


def test_read_limited_reads_to_the_limit_given(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"x" * 101)
    assert read_limited(DEFAULT, path) == b"x" * 101
    with pytest.raises(TooLargeError, match=r"a\.md: file is 101 bytes, over the 100 bytes"):
        read_limited(Limits(max_file_bytes=100), path)


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
    small = SourceFile("small.md", tmp_path / "small.md", "# Small\n\n## A\n\na\n\n## B\n\nb\n")
    assert len(parse_file(small)) == 3
    tight = ParseSettings(limits=Limits(max_sections=2))
    with pytest.raises(TooLargeError, match=r"small\.md: 3 sections, over the limit of 2"):
        parse_file(small, settings=tight)
    # Without settings given, parse_file reads them from the environment.
    monkeypatch.setenv("CITEWISE_MAX_SECTIONS", "2")
    with pytest.raises(TooLargeError, match=r"small\.md: 3 sections, over the limit of 2"):
        parse_file(small)
