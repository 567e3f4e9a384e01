"""Reading a knowledge base back: a document's text, one section whole, example headings."""

from __future__ import annotations

from tests.kb_support import MakeKB, sections, upload

PAGE = sections("Leave policy", "Annual leave is 25 days.", "Sick leave needs a note. 🤒")


def test_a_document_and_a_section_read_back_from_the_chunks(make_kb: MakeKB) -> None:
    kb = make_kb()
    kb.add_documents([upload("hr/leave.md", PAGE), upload("notes.txt", "Plain notes.")])
    text = kb.document_text("hr/leave.md")
    assert text == (
        "# Leave policy\n\n## Part 1\n\nAnnual leave is 25 days.\n\n"
        "## Part 2\n\nSick leave needs a note. 🤒\n"
    )
    assert kb.document_text("notes.txt") is not None
    assert "Plain notes." in (kb.document_text("notes.txt") or "")
    assert kb.document_text("missing.md") is None

    (hit,) = kb.search("sick note", top_k=1)
    assert kb.section(hit.url) == "## Part 2\n\nSick leave needs a note. 🤒\n"
    assert kb.section("nowhere.md#part-1") is None
    assert kb.example_headings() == ["Leave policy", "Notes"]
