"""Safe extraction of a docs folder from tag archives, and refusal of hostile ones."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from citewise.errors import DocsFolderMissingError, SourceError, UnsafeArchiveError
from citewise.sources.archive import ExtractLimits, extract_docs, skipped_links

from .conftest import Member, link, special, tar_gz, widget_docs, zip_bytes

TOP = "widgets-1.0.0/"


def every_file(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def write(tmp_path: Path, data: bytes, name: str = "archive.tar.gz") -> Path:
    path = tmp_path / "download" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_only_the_docs_folder_and_the_files_beside_it_are_extracted(tmp_path: Path) -> None:
    archive = write(tmp_path, tar_gz({TOP + n: d for n, d in widget_docs("1.0.0").items()}))
    docs = extract_docs(archive, tmp_path / "cache" / "source")
    assert docs == tmp_path / "cache" / "source" / "docs"
    # The site config and the project's top-level files (a page may include README.md);
    # never the other folders (src/ is the API source, extracted on its own).
    assert every_file(tmp_path / "cache" / "source") == {
        "mkdocs.yml",
        "README.md",
        "docs/index.md",
        "docs/guide/index.md",
        "docs/guide/install.md",
        "docs/examples/index.md",
        "docs/examples/cache.md",
    }
    assert (docs / "guide" / "install.md").read_text() == (
        "# Install\n\nRun pip install widgets==1.0.0.\n"
    )


def test_zip_archives_and_archives_without_a_top_folder_work(tmp_path: Path) -> None:
    archive = write(tmp_path, zip_bytes(widget_docs("1.0.0")), "archive.zip")
    docs = extract_docs(archive, tmp_path / "cache" / "source")
    assert "guide/install.md" in every_file(docs)


def test_a_nested_docs_folder_can_be_named(tmp_path: Path) -> None:
    archive = write(tmp_path, tar_gz({TOP + "site/docs/a.md": b"# A\n", TOP + "README.md": b""}))
    docs = extract_docs(archive, tmp_path / "out", docs_dir="site/docs")
    assert every_file(tmp_path / "out") == {"site/docs/a.md"}
    assert docs == tmp_path / "out" / "site" / "docs"


def test_links_outside_the_docs_folder_are_skipped_not_extracted(tmp_path: Path) -> None:
    members: dict[str, Member] = {TOP + "docs/index.md": b"# Home\n"}
    members[TOP + "src/notes.md"] = link(tarfile.SYMTYPE, "../docs/index.md")
    members[TOP + "README.md"] = link(tarfile.SYMTYPE, "docs/index.md")
    archive = write(tmp_path, tar_gz(members))
    extract_docs(archive, tmp_path / "out")
    # A top-level link into the archive is a copy of its target; other folders stay out.
    assert every_file(tmp_path / "out") == {"docs/index.md", "README.md"}
    assert (tmp_path / "out" / "README.md").read_bytes() == b"# Home\n"


def test_archive_without_docs_folder_names_what_it_looked_for(tmp_path: Path) -> None:
    archive = write(tmp_path, tar_gz({TOP + "README.md": b"# Repo\n", TOP + "doc/x.md": b""}))
    with pytest.raises(DocsFolderMissingError, match=r"has no docs folder widgets-1\.0\.0/docs/"):
        extract_docs(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_not_an_archive_is_a_source_error(tmp_path: Path) -> None:
    archive = write(tmp_path, b"<html>rate limited</html>")
    with pytest.raises(SourceError, match="not a readable .tar.gz or .zip"):
        extract_docs(archive, tmp_path / "out")


HOSTILE_TARS: dict[str, dict[str, Member]] = {
    "path traversal": {TOP + "docs/index.md": b"# Home\n", TOP + "docs/../../evil.md": b"x"},
    "parent path": {"../evil.md": b"x", TOP + "docs/index.md": b"# Home\n"},
    "absolute path": {TOP + "docs/index.md": b"# Home\n", "/tmp/citewise-evil.md": b"x"},
    "hardlink": {
        TOP + "docs/index.md": b"# Home\n",
        TOP + "docs/shadow.md": link(tarfile.LNKTYPE, "/etc/shadow"),
    },
    "device": {TOP + "docs/index.md": b"# Home\n", TOP + "docs/null": special(tarfile.CHRTYPE)},
    "fifo": {TOP + "docs/index.md": b"# Home\n", TOP + "docs/pipe": special(tarfile.FIFOTYPE)},
    "decompression bomb": {TOP + "docs/index.md": b"# Home\n", TOP + "docs/big.md": bytes(3 << 20)},
    "too many files": {TOP + f"docs/p{i}.md": b"# P\n" for i in range(6)},
}
LIMITS = ExtractLimits(max_files=5, max_bytes=1 << 20)


@pytest.mark.parametrize("case", sorted(HOSTILE_TARS))
def test_hostile_tar_archives_are_refused_with_nothing_written(tmp_path: Path, case: str) -> None:
    archive = write(tmp_path, tar_gz(HOSTILE_TARS[case]))
    cache = tmp_path / "cache"
    with pytest.raises(UnsafeArchiveError, match="refused"):
        extract_docs(archive, cache / "source", limits=LIMITS)
    # Nothing anywhere but the archive itself: no extracted file, no temporary folder.
    assert every_file(tmp_path) == {"download/archive.tar.gz"}
    assert not cache.exists() or not any(cache.iterdir())
    assert not Path("/tmp/citewise-evil.md").exists()


@pytest.mark.parametrize(
    ("members", "symlinks"),
    [
        ({"docs/index.md": b"# Home\n", "docs/../../evil.md": b"x"}, {}),
        ({"docs/index.md": b"# Home\n", "/abs/evil.md": b"x"}, {}),
        ({"docs/index.md": b"# Home\n", "docs/big.md": bytes(3 << 20)}, {}),
    ],
    ids=["traversal", "absolute", "bomb"],
)
def test_hostile_zip_archives_are_refused(
    tmp_path: Path, members: dict[str, bytes], symlinks: dict[str, str]
) -> None:
    archive = write(tmp_path, zip_bytes(members, symlinks=symlinks), "archive.zip")
    with pytest.raises(UnsafeArchiveError, match="refused"):
        extract_docs(archive, tmp_path / "cache" / "source", limits=LIMITS)
    assert every_file(tmp_path) == {"download/archive.zip"}


def test_a_zip_whose_declared_sizes_lie_is_refused(tmp_path: Path) -> None:
    archive = write(tmp_path, zip_bytes({"docs/big.md": bytes(3 << 20)}), "archive.zip")
    data = bytearray(archive.read_bytes())
    # Rewrite the declared sizes (local header and central directory) to a harmless 10 bytes.
    size = (3 << 20).to_bytes(4, "little")
    data = bytearray(data.replace(size, (10).to_bytes(4, "little")))
    archive.write_bytes(bytes(data))
    with pytest.raises((UnsafeArchiveError, SourceError)):
        extract_docs(archive, tmp_path / "cache" / "source", limits=LIMITS)
    assert every_file(tmp_path) == {"download/archive.zip"}


def test_whole_archive_scan_is_capped(tmp_path: Path) -> None:
    members = {TOP + "docs/index.md": b"# Home\n", TOP + "data.bin": bytes(2 << 20)}
    archive = write(tmp_path, tar_gz(members))
    with pytest.raises(UnsafeArchiveError, match="unpacked"):
        extract_docs(archive, tmp_path / "out", limits=ExtractLimits(max_archive_bytes=1 << 20))


def test_an_existing_complete_extraction_is_kept(tmp_path: Path) -> None:
    archive = write(tmp_path, tar_gz({TOP + "docs/index.md": b"# New\n"}))
    dest = tmp_path / "out"
    (dest / "docs").mkdir(parents=True)
    (dest / "docs" / "index.md").write_text("# Old\n")
    extract_docs(archive, dest)
    assert (dest / "docs" / "index.md").read_text() == "# Old\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_truncated_archive_is_a_source_error_with_nothing_kept(tmp_path: Path) -> None:
    data = tar_gz({TOP + n: d for n, d in widget_docs("1.0.0").items()})
    archive = write(tmp_path, data[: len(data) // 2])
    with pytest.raises(SourceError, match="archive.tar.gz"):
        extract_docs(archive, tmp_path / "cache" / "source")
    assert every_file(tmp_path) == {"download/archive.tar.gz"}


# -- symbolic links: materialised inside the archive, skipped and reported otherwise ----------


def test_links_within_the_archive_are_materialised_as_copies(tmp_path: Path) -> None:
    members: dict[str, Member] = {
        TOP + "logo.svg": b"<svg/>",
        TOP + "CHANGES.md": b"# Changes\n",
        TOP + "examples/app.md": b"# App\n",
        TOP + "docs/index.md": b"# Home\n",
        TOP + "docs/logo.svg": link(tarfile.SYMTYPE, "../logo.svg"),
        TOP + "docs/changes.md": link(tarfile.SYMTYPE, "changelog.md"),  # a chain of two
        TOP + "docs/changelog.md": link(tarfile.SYMTYPE, "./../CHANGES.md"),
        TOP + "docs/examples": link(tarfile.SYMTYPE, "../examples"),
    }
    dest = tmp_path / "out"
    docs = extract_docs(write(tmp_path, tar_gz(members)), dest)
    assert every_file(docs) == {
        "index.md", "logo.svg", "changes.md", "changelog.md", "examples/app.md"
    }  # fmt: skip
    assert (docs / "logo.svg").read_bytes() == b"<svg/>"
    assert (docs / "changes.md").read_text() == "# Changes\n"
    assert (docs / "examples" / "app.md").read_text() == "# App\n"
    assert not any(path.is_symlink() for path in dest.rglob("*"))
    assert skipped_links(dest) == {}


def test_links_out_of_the_archive_dangling_or_looping_are_skipped_and_reported(
    tmp_path: Path,
) -> None:
    members: dict[str, Member] = {
        TOP + "docs/index.md": b"# Home\n",
        TOP + "docs/passwd.md": link(tarfile.SYMTYPE, "/etc/passwd"),
        TOP + "docs/escape.md": link(tarfile.SYMTYPE, "../../../../etc/hosts"),
        TOP + "docs/gone.md": link(tarfile.SYMTYPE, "../missing.md"),
        TOP + "docs/up": link(tarfile.SYMTYPE, "../.."),
        TOP + "docs/a.md": link(tarfile.SYMTYPE, "b.md"),
        TOP + "docs/b.md": link(tarfile.SYMTYPE, "a.md"),
    }
    dest = tmp_path / "out"
    docs = extract_docs(write(tmp_path, tar_gz(members)), dest)
    assert every_file(docs) == {"index.md"}
    assert not any(path.is_symlink() for path in dest.rglob("*"))
    skipped = skipped_links(dest)
    assert sorted(skipped) == [
        "docs/a.md", "docs/b.md", "docs/escape.md", "docs/gone.md", "docs/passwd.md", "docs/up"
    ]  # fmt: skip
    assert "'/etc/passwd' points outside the archive" in skipped["docs/passwd.md"]
    assert "points outside the archive" in skipped["docs/escape.md"]
    assert "dangles" in skipped["docs/gone.md"]
    assert "loops back" in skipped["docs/up"]
    assert "a loop of links" in skipped["docs/a.md"]


def test_a_zip_link_is_resolved_the_same_way(tmp_path: Path) -> None:
    archive = write(
        tmp_path,
        zip_bytes({"logo.svg": b"<svg/>", "docs/index.md": b"# Home\n"},
                  symlinks={"docs/logo.svg": "../logo.svg", "docs/passwd.md": "/etc/passwd"}),
        "archive.zip",
    )  # fmt: skip
    docs = extract_docs(archive, tmp_path / "out")
    assert every_file(docs) == {"index.md", "logo.svg"}
    assert list(skipped_links(tmp_path / "out")) == ["docs/passwd.md"]


def test_materialised_links_count_against_the_caps(tmp_path: Path) -> None:
    members: dict[str, Member] = {TOP + "big.bin": bytes(600 << 10), TOP + "docs/index.md": b""}
    members.update({TOP + f"docs/copy{i}.bin": link(tarfile.SYMTYPE, "../big.bin") for i in (1, 2)})
    with pytest.raises(UnsafeArchiveError, match="decompression bomb"):
        extract_docs(write(tmp_path, tar_gz(members)), tmp_path / "out", limits=LIMITS)
    assert not (tmp_path / "out").exists()
