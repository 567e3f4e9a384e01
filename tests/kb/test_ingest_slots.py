"""Chunking runs inside the installation's parse slot, like parsing: a document's parse +
chunk job holds one of the home's slot files (``{home}/.parse-slots``) from start to end."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import pytest

from citewise.kb import ingest
from citewise.models import Section
from tests.kb_support import MakeKB, upload


def held_slots(folder: Path) -> int:
    """How many of the folder's slot files some open file holds locked now (a lock taken
    through another open file of this process blocks a new one as well)."""
    held = 0
    for path in sorted(folder.glob("slot-*.lock")):
        handle = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(handle, fcntl.LOCK_UN)
        except BlockingIOError:
            held += 1
        finally:
            os.close(handle)
    return held


def slots_while_chunking(monkeypatch: pytest.MonkeyPatch, folder: Path) -> list[tuple[str, int]]:
    """Filled with each chunking job's document and the parse slots held around it (the real
    chunker still runs)."""
    seen: list[tuple[str, int]] = []
    chunk_sections = ingest.chunk_sections

    def observed(sections: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((sections[0].doc_id, held_slots(folder)))
        return chunk_sections(sections, *args, **kwargs)

    monkeypatch.setattr(ingest, "chunk_sections", observed)
    return seen


def test_chunking_holds_the_parse_slot(
    make_kb: MakeKB, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWISE_PARSE_CONCURRENCY", "1")
    kb = make_kb("slots")
    folder = tmp_path / "home" / ".parse-slots"
    seen = slots_while_chunking(monkeypatch, folder)
    kb.add_documents([upload("a.md", "# A\n\nAlpha text."), upload("b.md", "# B\n\nBeta text.")])
    assert seen == [("a.md", 1), ("b.md", 1)]
    assert held_slots(folder) == 0  # released after each job
    assert [hit.chunk.doc_id for hit in kb.search("Beta", search_type="full_text", top_k=1)] == [
        "b.md"
    ]


def test_given_sections_take_no_parse_slot_while_files_do(
    make_kb: MakeKB, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWISE_PARSE_CONCURRENCY", "1")
    kb = make_kb("given")
    folder = tmp_path / "home" / ".parse-slots"
    seen = slots_while_chunking(monkeypatch, folder)
    given = Section("given.md", "Given", ("Given",), 1, "", "given.md", "given.md", "Gamma text.")
    kb.add_sections({"given.md": [given]})
    kb.add_documents([upload("a.md", "# A\n\nAlpha text.")])
    # Sections given as they are were not parsed: no slot; the uploaded file's job took one.
    assert seen == [("given.md", 0), ("a.md", 1)]
    assert held_slots(folder) == 0
    assert [hit.chunk.doc_id for hit in kb.search("Gamma", search_type="full_text", top_k=1)] == [
        "given.md"
    ]


def test_section_items_do_not_parse_and_other_items_do() -> None:
    given = Section("d", "D", ("D",), 1, "", "d", "d", "Delta.")
    [item] = ingest.section_items({"d": [given]})
    assert not item.parses
    assert item.sections() == [given]
    [upload_item] = ingest.upload_items(
        [upload("u.md", "# U\n\nUpsilon.")], scope="", max_chars=500
    )
    assert upload_item.parses
