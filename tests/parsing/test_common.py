"""Helpers the non-Markdown parsers share: file URLs, titles and Markdown tables."""

from __future__ import annotations

import pytest

from citewise.parsing.common import file_page, file_url, markdown_table, title_from_name


@pytest.mark.parametrize(
    ("doc_id", "page"),
    [
        ("a/b.pdf", "a/b.pdf"),
        ("./a/b.docx", "a/b.docx"),
        ("a\\b.txt", "a/b.txt"),
        ("guide/index.html", "guide/"),
        ("INDEX.HTM", ""),
        ("guide/index.pdf", "guide/index.pdf"),
    ],
)
def test_files_are_served_as_themselves(doc_id: str, page: str) -> None:
    assert file_page(doc_id) == page


def test_file_url_has_the_version_segment() -> None:
    assert file_url("a/b.pdf", "https://x.io", "1.2") == "https://x.io/1.2/a/b.pdf"
    assert file_url("a/b.pdf", "", None) == "a/b.pdf"


@pytest.mark.parametrize(
    ("doc_id", "title"),
    [
        ("notes/release-notes.txt", "Release notes"),
        ("API_Guide.pdf", "API Guide"),
        ("CHANGELOG", "CHANGELOG"),
        ("data/2024.sales.csv", "2024.sales"),
    ],
)
def test_title_from_name(doc_id: str, title: str) -> None:
    assert title_from_name(doc_id) == title


def test_markdown_table_rows_are_single_lines_with_escaped_pipes() -> None:
    assert markdown_table([["a", "b"], ["x | y", "two\nlines"], ["only"]]) == (
        "| a | b |\n| --- | --- |\n| x \\| y | two lines |\n| only |  |"
    )
    assert markdown_table([]) == ""
    assert markdown_table([[], []]) == ""
