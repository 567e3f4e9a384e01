"""url_citation spans come from the final text and only for retrieved section URLs."""

from __future__ import annotations

from citewise.graph.citations import find_citations

SECTIONS = {
    "https://docs.example/1.0/guide/#install": "Guide › Install",
    "https://docs.example/1.0/faq/": "FAQ",
}


def test_markdown_link_to_a_section_becomes_a_citation_spanning_the_link() -> None:
    text = "Install it first ([Install](https://docs.example/1.0/guide/#install))."
    (citation,) = find_citations(text, SECTIONS)
    assert text[citation.start_index : citation.end_index] == (
        "[Install](https://docs.example/1.0/guide/#install)"
    )
    assert citation.title == "Guide › Install"
    assert citation.type == "url_citation"


def test_bare_url_is_cited_without_trailing_punctuation() -> None:
    text = "See https://docs.example/1.0/faq/. Then go on."
    (citation,) = find_citations(text, SECTIONS)
    assert text[citation.start_index : citation.end_index] == "https://docs.example/1.0/faq/"


def test_other_links_and_near_misses_stay_plain() -> None:
    text = (
        "[elsewhere](https://other.example/) and [close](https://docs.example/1.0/guide/#inst) "
        "and https://docs.example/1.0/faq/extra"
    )
    assert find_citations(text, SECTIONS) == []


def test_citations_are_in_text_order_and_unicode_indices_are_characters() -> None:
    text = "é [FAQ](https://docs.example/1.0/faq/) — [Install](https://docs.example/1.0/guide/#install)"
    citations = find_citations(text, SECTIONS)
    assert [c.url for c in citations] == list(reversed(list(SECTIONS)))
    assert citations[0].start_index == 2
    assert all(text[c.start_index] == "[" and text[c.end_index - 1] == ")" for c in citations)
