"""A failed rebuild keeps the old index; indexing another folder needs an explicit replace."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.cli import main
from citewise.config import Settings
from citewise.embedding.base import Embedder
from citewise.errors import KnowledgeBaseError, SourceError
from citewise.kb import KnowledgeBase

PAGE = "# Guide\n\n## Install\n\nRun pip install widget to install the widget.\n"


def docs(folder: Path, text: str = PAGE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "guide.md").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def kb(tmp_path: Path, minilm: Embedder) -> KnowledgeBase:
    kb = KnowledgeBase("guide", settings=Settings(home=tmp_path / "home"), embedder=minilm)
    kb.index_folder(docs(tmp_path / "docs"))
    return kb


def ids(kb: KnowledgeBase) -> list[str]:
    return [doc.doc_id for doc in kb.documents()]


def test_a_rebuild_from_a_missing_folder_keeps_the_index(kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="folder not found"):
        kb.index_folder(tmp_path / "gone", rebuild=True)
    assert ids(kb) == ["guide.md"]
    assert kb.search("install the widget", top_k=1)


def test_a_rebuild_that_fails_on_a_binary_file_keeps_the_index(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    folder = docs(tmp_path / "docs")
    (folder / "broken.md").write_bytes(b"# Broken\n\x00\x01")
    with pytest.raises(SourceError, match="broken.md: binary file"):
        kb.index_folder(folder, rebuild=True)
    assert ids(kb) == ["guide.md"]


def test_a_rebuild_re_embeds_everything_and_keeps_the_settings(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    report = kb.index_folder(tmp_path / "docs", rebuild=True)
    assert report.added == ["guide.md"] and report.chunks_embedded == report.chunks > 0
    assert ids(kb) == ["guide.md"]


def test_another_folder_is_refused_unless_replace(kb: KnowledgeBase, tmp_path: Path) -> None:
    other = docs(tmp_path / "other", "# Other\n\n## Colours\n\nThe widget is blue.\n")
    with pytest.raises(
        KnowledgeBaseError, match=r"was indexed from .*docs, not .*other.*--replace"
    ):
        kb.index_folder(other)
    assert ids(kb) == ["guide.md"]
    kb.index_folder(other, replace=True)
    assert ids(kb) == ["guide.md"]  # same file name, now the other folder's content
    assert "blue" in kb.search("widget colour", top_k=1)[0].chunk.text


def test_the_cli_rebuild_of_a_missing_folder_fails_and_keeps_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CITEWISE_HOME", str(tmp_path / "home"))
    assert main(["index", str(docs(tmp_path / "docs")), "--kb", "guide", "-q"]) == 0
    assert main(["index", str(tmp_path / "gone"), "--kb", "guide", "--rebuild", "-q"]) == 1
    assert "folder not found" in capsys.readouterr().err
    assert main(["search", "install the widget", "--kb", "guide", "--json"]) == 0
    assert "guide" in capsys.readouterr().out
