"""The parts of an answer the check reads: blocks with their spans, links outside code."""

from __future__ import annotations

from citewise.grounding.markdown import blocks, links, sentence_around

ANSWER = (
    "## Install\n\n"
    "Add it to your project.\nIt needs Python 3.11.\n\n"
    "- first item\n- second item\n  continued\n\n"
    "```bash\npip install example\n\nexample serve\n```\n\n"
    "See [Install](https://docs.example/install/) or https://docs.example/faq/. "
    "Not `https://in.code/` nor:\n\n```\nhttps://in.fence/\n```"
)


def test_blocks_are_paragraphs_items_headings_and_whole_code_blocks() -> None:
    found = blocks(ANSWER)

    assert [b.kind for b in found] == [
        "heading", "paragraph", "item", "item", "code", "paragraph", "code",
    ]  # fmt: skip
    assert found[1].text == "Add it to your project.\nIt needs Python 3.11."
    assert found[3].text == "- second item\n  continued"
    assert found[4].language == "bash" and "example serve" in found[4].text
    assert all(ANSWER[b.start : b.end] == b.text for b in found)


def test_links_are_markdown_links_and_bare_urls_outside_code() -> None:
    assert [link.url for link in links(ANSWER)] == [
        "https://docs.example/install/",
        "https://docs.example/faq/",
    ]


def test_the_sentence_around_a_span_stops_at_sentence_ends() -> None:
    text = "First sentence here. Second one cites [x](u). Third."
    start, end = sentence_around(text, text.index("[x]"), text.index("(u)") + 3)

    assert text[start:end] == "Second one cites [x](u)."
