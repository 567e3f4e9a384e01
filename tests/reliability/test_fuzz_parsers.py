"""Fuzzed documents: every parser either returns sections or raises citewise's own error."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citewise.errors import CitewiseError
from citewise.kb import source_from_bytes
from citewise.parsing.base import binary_parser, parser_for
from citewise.parsing.source import parse_file

TEXT_SUFFIXES = (".md", ".html", ".txt", ".csv", ".rst")
FUZZ = settings(
    max_examples=150, deadline=2000, database=None, suppress_health_check=[HealthCheck.too_slow]
)

# Text that looks like the formats, so the parsers' own paths run, not only their fallbacks.
MARKUP = st.sampled_from(
    [
        "# ", "## ", "\n", "\n\n", "```", "<h1>", "</h1>", "<h2 id='x'>", "<a name=", "<p>",
        "<!--", "-->", "|", "---", "===", ".. ", "::", ",", '"', "\t", "[", "](", ")", "{#",
        "}", "&amp;", "\x00", "\u202e", "🎉", "日本語", "é", "\r\n", "<script>", "&#0;",
    ]
)  # fmt: skip
DOCUMENTS = st.lists(st.one_of(MARKUP, st.text(max_size=20)), max_size=40).map("".join)


@pytest.fixture(scope="module", autouse=True)
def warm_worker() -> None:
    """A started parse worker, so the deadline times parses, not the worker's start."""
    parse_file(source_from_bytes("warm.csv", b"a,b\n1,2\n"))


@pytest.mark.parametrize("suffix", TEXT_SUFFIXES)
@FUZZ
@given(text=DOCUMENTS)
def test_text_parsers_return_sections_or_a_citewise_error(suffix: str, text: str) -> None:
    parser = parser_for(f"page{suffix}")
    assert parser is not None
    try:
        sections = parser.parse(text, doc_id=f"page{suffix}", site_url="https://x/", version=None)
    except CitewiseError:
        return
    for section in sections:
        assert isinstance(section.text, str)


@pytest.mark.parametrize("suffix", [*TEXT_SUFFIXES, ".pdf", ".docx"])
@FUZZ
@given(data=st.binary(max_size=2048))
def test_any_bytes_are_parsed_or_refused_with_a_citewise_error(suffix: str, data: bytes) -> None:
    try:
        parse_file(source_from_bytes(f"file{suffix}", data))
    except CitewiseError:
        pass


@pytest.mark.parametrize("suffix", [".pdf", ".docx"])
@FUZZ
@given(head=st.sampled_from([b"%PDF-1.7\n", b"PK\x03\x04"]), tail=st.binary(max_size=2048))
def test_binary_parsers_refuse_broken_files_with_a_citewise_error(
    suffix: str, head: bytes, tail: bytes
) -> None:
    parser = binary_parser(parser_for(f"f{suffix}"))  # type: ignore[arg-type]
    assert parser is not None
    try:
        parser.parse_bytes(head + tail, doc_id=f"f{suffix}", site_url="", version=None)
    except CitewiseError:
        pass
