"""Plain text and CSV files: one section each; CSV records as whole Markdown table rows."""

from __future__ import annotations

import pytest

from citewise.chunking import chunk_sections
from citewise.errors import SourceError
from citewise.models import Section
from citewise.parsing.base import binary_parser, parser_for
from citewise.parsing.text import CsvParser, TextParser, parse_csv, parse_text

SITE = "https://docs.example/"


def csv_section(text: str, doc_id: str = "data/prices.csv") -> Section:
    (section,) = parse_csv(text, doc_id=doc_id, site_url=SITE, version=None, scope="data")
    return section


def test_text_is_one_section_titled_after_the_file() -> None:
    text = "First paragraph.  \nStill first.\n\n\nSecond paragraph.\n"
    (section,) = parse_text(text, doc_id="notes/release_notes.txt", site_url=SITE, version="2")
    assert section.title == "Release notes"
    assert section.heading_path == ("Release notes",)
    assert section.anchor == ""
    assert section.url == f"{SITE}2/notes/release_notes.txt"
    assert section.page == "notes/release_notes.txt"
    assert section.text == "First paragraph.\nStill first.\n\n\nSecond paragraph."


def test_long_text_is_split_by_the_chunker_between_paragraphs() -> None:
    paragraphs = [f"Paragraph {i}: " + "words " * 30 for i in range(12)]
    sections = parse_text("\n\n".join(paragraphs), doc_id="long.txt", site_url="", version=None)
    chunks = chunk_sections(sections, max_chars=600)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.text.startswith("Long\n\n")
        assert all(block.startswith("Paragraph ") for block in chunk.text.split("\n\n")[1:])


def test_csv_becomes_a_table_and_quoted_commas_and_newlines_stay_in_their_cell() -> None:
    text = (
        'name,price,notes\n'
        'widget,9.99,"cheap, cheerful"\n'
        '"gadget, large",19.50,"two\nlines"\n'
        'pipe,1,"a|b"\n'
        '\n'
    )  # fmt: skip
    section = csv_section(text)
    assert section.title == "Prices"
    assert section.url == f"{SITE}data/prices.csv"
    assert section.scope == "data"
    assert section.text == (
        "| name | price | notes |\n"
        "| --- | --- | --- |\n"
        "| widget | 9.99 | cheap, cheerful |\n"
        "| gadget, large | 19.50 | two lines |\n"
        "| pipe | 1 | a\\|b |"
    )


def test_csv_dialect_is_sniffed() -> None:
    text = 'city;population\n"Paris; FR";2100000\nLyon;500000\n'
    assert csv_section(text).text.split("\n")[2:] == [
        "| Paris; FR | 2100000 |",
        "| Lyon | 500000 |",
    ]
    tsv = "a\tb\n1\t2, 3\n"
    assert csv_section(tsv, doc_id="t.tsv").text.split("\n")[2] == "| 1 | 2, 3 |"


def test_ragged_rows_are_padded_and_an_empty_file_has_an_empty_section() -> None:
    assert csv_section("a,b,c\n1\n1,2,3,4\n").text == (
        "| a | b | c |  |\n| --- | --- | --- | --- |\n| 1 |  |  |  |\n| 1 | 2 | 3 | 4 |"
    )
    assert csv_section("").text == ""


def test_long_csv_chunks_between_records_with_the_header_repeated() -> None:
    rows = "".join(f'sku-{i},"Widget {i}, deluxe edition",{i}.00\n' for i in range(60))
    chunks = chunk_sections([csv_section("sku,name,price\n" + rows)], max_chars=500)
    assert len(chunks) > 3
    records = []
    for chunk in chunks:
        lines = chunk.text.split("\n")
        assert lines[:4] == ["Prices", "", "| sku | name | price |", "| --- | --- | --- |"]
        records.extend(lines[4:])
    assert records == [f"| sku-{i} | Widget {i}, deluxe edition | {i}.00 |" for i in range(60)]


def test_invalid_csv_is_refused_with_its_name() -> None:
    with pytest.raises(SourceError, match=r"huge\.csv: not valid CSV"):
        csv_section('a\n"' + "x" * 200_000 + '"\n', doc_id="huge.csv")


@pytest.mark.parametrize(
    ("path", "kind"), [("a.txt", TextParser), ("b/C.CSV", CsvParser), ("d.tsv", CsvParser)]
)
def test_registered_as_text_parsers(path: str, kind: type) -> None:
    parser = parser_for(path)
    assert isinstance(parser, kind)
    assert parser is not None and binary_parser(parser) is None
