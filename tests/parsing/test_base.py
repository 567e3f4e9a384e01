"""The parser registry and protocols: every format is registered, binary ones read bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.models import Section
from citewise.parsing import base
from citewise.parsing.base import (
    BinaryParser,
    MarkdownParser,
    Parser,
    binary_parser,
    binary_suffixes,
    register_parser,
    supported_suffixes,
)
from citewise.parsing.source import parse_file
from citewise.registry import Registry
from citewise.sources import read_folder


def test_every_format_is_registered() -> None:
    assert supported_suffixes() >= {
        ".md", ".markdown", ".html", ".htm", ".pdf", ".docx", ".txt", ".csv", ".tsv",
    }  # fmt: skip
    assert binary_suffixes() == {".pdf", ".docx"}


def test_a_text_parser_is_not_a_binary_parser() -> None:
    parser = MarkdownParser()
    assert isinstance(parser, Parser)
    assert not isinstance(parser, BinaryParser)
    assert binary_parser(parser) is None


class UpperBytes:
    """A third-party binary format: its sections say which bytes they were given."""

    binary = True

    def parse(
        self, text: str, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]:
        raise AssertionError("a binary parser must be given bytes")

    def parse_bytes(
        self, data: bytes, *, doc_id: str, site_url: str, version: str | None, scope: str = ""
    ) -> list[Section]:
        text = data.hex()
        return [Section(doc_id, "T", ("T",), 1, "", site_url + doc_id, doc_id, text, scope)]


def test_a_registered_binary_parser_gets_the_file_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parser = UpperBytes()
    assert isinstance(parser, BinaryParser)
    # A registry of its own, so the registration does not outlive the test.
    monkeypatch.setattr(base, "PARSERS", Registry("parser", {}))
    monkeypatch.setattr(base, "_INSTANCES", {})
    register_parser(".bin", parser)
    assert ".bin" in supported_suffixes() and ".bin" in binary_suffixes()
    (tmp_path / "blob.bin").write_bytes(b"\x00\xff\r\n")
    (source,) = read_folder(tmp_path, {".bin"})
    assert source.binary and source.data == b"\x00\xff\r\n"
    (section,) = parse_file(source, site_url="https://x/", version=None)
    assert section.text == "00ff0d0a"
    assert section.scope == ""
