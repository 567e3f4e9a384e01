"""A NUL byte anywhere in a text file marks it binary, not only in its first 8 KiB."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.documents import decode_text
from citewise.errors import SourceError
from citewise.sources import read_folder


def test_a_nul_after_the_first_8_kib_is_refused(tmp_path: Path) -> None:
    data = b"# Title\n\n" + b"a" * 10_000 + b"\x00tail\n"
    (tmp_path / "late.md").write_bytes(data)
    with pytest.raises(SourceError, match=r"late\.md: binary file, not text \(a NUL byte at"):
        [source.text for source in read_folder(tmp_path, {".md"})]


def test_text_without_nul_still_decodes() -> None:
    assert decode_text(b"# Title\r\n\r\nbody" + b"x" * 10_000, "ok.md").startswith("# Title\n\n")
