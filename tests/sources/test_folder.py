"""Reading a docs folder: what is read, what is skipped and the errors for bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.errors import SourceError
from citewise.sources import read_folder


def test_reads_markdown_sorted_and_skips_hidden_and_other_files(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "page.md").write_text("# B\r\ntext\r\n")
    (tmp_path / "a.md").write_text("# A\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.md").write_text("# hidden\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\x00")
    files = read_folder(tmp_path, {".md"})
    assert [f.doc_id for f in files] == ["a.md", "b/page.md"]
    assert files[1].text == "# B\ntext\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"# Title\n\x00\x01binary", "binary file"), (b"# Caf\xe9\n", "not valid UTF-8")],
)
def test_bad_files_are_refused_with_their_name(
    tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / "bad.md").write_bytes(content)
    with pytest.raises(SourceError, match=message) as caught:
        read_folder(tmp_path, {".md"})
    assert "bad.md" in str(caught.value)


def test_missing_and_empty_folders(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="folder not found"):
        read_folder(tmp_path / "nope", {".md"})
    with pytest.raises(SourceError, match="no documentation files"):
        read_folder(tmp_path, {".md"})
