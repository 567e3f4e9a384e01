"""Links that lead outside the docs folder are never read, and each is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.errors import SourceError
from citewise.sources import read_folder


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("# Secret\n\nroot:x:0:0\n")
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "install.md").write_text("# Install\n\nRun pip.\n")
    (docs / "passwd.md").symlink_to(secret)
    (docs / "linked").symlink_to(secret.parent, target_is_directory=True)
    (docs / "alias.md").symlink_to(docs / "guide" / "install.md")  # inside: fine
    return docs


def test_links_outside_the_folder_are_refused_and_named(folder: Path) -> None:
    refused: dict[str, str] = {}
    sources = read_folder(folder, {".md"}, binary=(), refused=refused)
    assert sorted(source.doc_id for source in sources) == ["alias.md", "guide/install.md"]
    assert all("root:x" not in source.text for source in sources)
    # A linked folder is not even walked (pathlib does not follow it); both are named.
    assert set(refused) == {"passwd.md", "linked"}
    assert all("outside the folder" in why for why in refused.values())
    assert "folder outside" in refused["linked"]


def test_a_folder_of_only_outside_links_has_nothing_to_index(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("# Secret\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "passwd.md").symlink_to(tmp_path / "secret.md")
    with pytest.raises(SourceError, match="no documentation files"):
        read_folder(docs, {".md"}, binary=())


def test_a_hard_link_is_the_file_itself_and_is_read(tmp_path: Path) -> None:
    # As docs/getting-started.md says: nothing tells a hard link from the file.
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nHard-linked text.\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "inside.md").hardlink_to(outside)
    refused: dict[str, str] = {}
    sources = read_folder(docs, {".md"}, binary=(), refused=refused)
    assert [s.doc_id for s in sources] == ["inside.md"] and refused == {}
    assert "Hard-linked text." in sources[0].text
