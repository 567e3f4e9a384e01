"""The extractive answer: quoted passages without the site-only markup of the docs."""

from __future__ import annotations

from citewise.extractive import clean_markup, extractive_answer

from .fakes import make_hit

GRID = """<div class="grid cards" markdown>

-   :material-api:{ .lg .middle } __OpenAI-compatible API__

    Serve any graph over the API.

</div>"""

ADMONITION = """!!! warning "Keep the key secret"
    Never commit it.

    Rotate it often.

After the note."""


def test_attribute_lists_icons_and_layout_html_are_stripped() -> None:
    cleaned = clean_markup(GRID + "\n\n## Setup { #setup .big }")
    assert (
        cleaned == "-   __OpenAI-compatible API__\n\n    Serve any graph over the API.\n\n## Setup"
    )


def test_admonitions_and_tabs_become_a_title_over_their_dedented_body() -> None:
    assert clean_markup(ADMONITION) == (
        "**Warning: Keep the key secret**\n\n"
        "Never commit it.\n\nRotate it often.\n\nAfter the note."
    )
    assert clean_markup('=== "pip"\n\n    pip install x') == "**pip**\n\npip install x"
    assert clean_markup("??? tip\n    Hidden.") == "**Tip**\n\nHidden."


def test_code_blocks_are_left_as_written_but_for_annotation_markers() -> None:
    code = '```html\n<div class="grid cards" markdown>{ .lg }\n:material-api:\n```'
    assert clean_markup(code) == code
    annotated = "```python\nif ok:  # (1)!\n    x = f(1)  # (2)\nprint('# (3)!')\n```"
    assert clean_markup(annotated) == "```python\nif ok:\n    x = f(1)\nprint('# (3)!')\n```"


def test_the_answer_quotes_the_cleaned_passage() -> None:
    hit = make_hit("api/", "overview", GRID, title="API")
    answer = extractive_answer("OpenAI-compatible API", [hit])
    assert "<div" not in answer.text and ":material-api:" not in answer.text
    assert "{ .lg" not in answer.text and "OpenAI-compatible API" in answer.text
    (citation,) = answer.citations
    assert answer.text[citation.start_index : citation.end_index].endswith(f"({hit.url})")
