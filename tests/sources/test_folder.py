"""Reading a docs folder: what is read, what is skipped and the errors for bad input."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from citewise.config import Limits
from citewise.errors import SourceError, TooLargeError
from citewise.sources import SourceFile, read_folder


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


# --- binary formats and size limits -----------------------------------------------------------


def test_binary_formats_keep_their_bytes_and_have_no_text(tmp_path: Path) -> None:
    pdf = b"%PDF-1.4\n\x00\xe2\xe3 not text\r\n"
    (tmp_path / "manual.pdf").write_bytes(pdf)
    (tmp_path / "page.md").write_text("# Page\r\n")
    manual, page = read_folder(tmp_path, {".md", ".pdf"}, binary={".pdf"})
    assert (manual.doc_id, manual.binary, manual.data) == ("manual.pdf", True, pdf)
    with pytest.raises(SourceError, match=r"manual\.pdf: binary format"):
        _ = manual.text
    assert manual.content_hash == hashlib.sha256(pdf).hexdigest()
    assert (page.binary, page.text, page.data) == (False, "# Page\n", b"# Page\n")


def test_registered_binary_formats_are_the_default(tmp_path: Path) -> None:
    (tmp_path / "a.docx").write_bytes(b"PK\x03\x04 zip bytes")
    (source,) = read_folder(tmp_path, {".docx"})
    assert source.binary and source.data == b"PK\x03\x04 zip bytes"


def test_source_file_from_text_keeps_its_old_shape_and_hash() -> None:
    source = SourceFile("a.md", Path("docs/a.md"), "# Café\n")
    assert (source.doc_id, source.text, source.binary) == ("a.md", "# Café\n", False)
    assert source.data == "# Café\n".encode()
    assert source.content_hash == hashlib.sha256("# Café\n".encode()).hexdigest()
    assert source == SourceFile("a.md", Path("docs/a.md"), "# Café\n")
    assert source != SourceFile("a.md", Path("docs/a.md"), "# Cafe\n")


def test_source_file_from_text_bytes_decodes_when_asked() -> None:
    source = SourceFile("a.txt", Path("a.txt"), data=b"\xef\xbb\xbfline\r\nnext")
    assert source.text == "line\nnext"
    assert source.data == b"line\nnext"  # the normalised text: a CRLF change is no edit
    broken = SourceFile("b.txt", Path("b.txt"), data=b"caf\xe9")
    with pytest.raises(SourceError, match=r"b\.txt: not valid UTF-8"):
        _ = broken.text
    with pytest.raises(ValueError, match="text or its data"):
        SourceFile("c.txt", Path("c.txt"))
    with pytest.raises(ValueError, match="binary SourceFile needs its data"):
        SourceFile("c.pdf", Path("c.pdf"), "text", binary=True)


@pytest.mark.parametrize("name", ["big.md", "big.pdf"])
def test_files_over_the_limit_are_refused_with_their_name(tmp_path: Path, name: str) -> None:
    small = Limits(max_file_bytes=100)
    (tmp_path / "ok.md").write_text("x" * 100)
    assert len(read_folder(tmp_path, {".md", ".pdf"}, limits=small)) == 1
    (tmp_path / name).write_bytes(b"y" * 101)
    with pytest.raises(TooLargeError, match=rf"{name}: file is 101 bytes, over the 100 bytes"):
        read_folder(tmp_path, {".md", ".pdf"}, limits=small)
    assert len(read_folder(tmp_path, {".md", ".pdf"})) == 2  # within the default 16 MiB


def test_the_real_file_limit_is_16_mib_and_refuses_without_reading(tmp_path: Path) -> None:
    assert Limits().max_file_bytes == 16 * 1024 * 1024
    big = tmp_path / "huge.pdf"
    with big.open("wb") as handle:  # sparse: no 16 MiB written to disk
        handle.truncate(16 * 1024 * 1024 + 1)
    with pytest.raises(TooLargeError, match=r"huge\.pdf: file is more than the 16\.0 MiB limit"):
        read_folder(tmp_path, {".pdf"})
    big.unlink()
    exact = tmp_path / "exact.txt"
    with exact.open("wb") as handle:
        handle.truncate(16 * 1024 * 1024)
    # Exactly at the limit passes the size check, so the next check (NUL bytes) speaks.
    with pytest.raises(SourceError, match=r"exact\.txt: binary file, not text"):
        read_folder(tmp_path, {".txt"}, binary=())
