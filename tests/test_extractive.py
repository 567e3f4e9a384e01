"""The extractive answer: quoted passages without the site-only markup of the docs."""

from __future__ import annotations

from citewise.extractive import clean_markup, extractive_answer, is_small_talk

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


def test_fence_info_keeps_only_the_language() -> None:
    code = '```python title="app.py" linenums="1" hl_lines="2"\nimport app\n```'
    assert clean_markup(code) == "```python\nimport app\n```"
    assert clean_markup('~~~ { .yaml title="c.yml" }\na: 1\n~~~') == "~~~yaml\na: 1\n~~~"


def test_source_code_lines_and_docstring_fields_read_as_text() -> None:
    body = (
        "Send a GET request.\n\n"
        ":param url: URL for the new request.\n"
        ":param \\*\\*kwargs: Optional arguments.\n"
        ":type url: str\n"
        ":return: the response\n"
        ":rtype: requests.Response\n"
        ":raises ValueError: on a bad URL\n\n"
        "Source code in `src/requests/api.py`\n\n"
        "```rst\n:rtype: kept in code\n```"
    )
    assert clean_markup(body) == (
        "Send a GET request.\n\n"
        "- `url` (`str`): URL for the new request.\n"
        "- `**kwargs`: Optional arguments.\n"
        "- Returns: the response\n"
        "- Return type: `requests.Response`\n"
        "- Raises `ValueError`: on a bad URL\n\n"
        "```rst\n:rtype: kept in code\n```"
    )


def test_a_bare_title_is_never_the_quoted_passage() -> None:
    titled = make_hit("auth/", "overview", "# Authentication\n\nAdd a key with `API_KEY`.")
    bare = make_hit("index/", "home", "# Authentication")
    answer = extractive_answer("authentication", [bare, titled])
    quotes = [line for line in answer.text.splitlines() if line.startswith(">")]
    assert quotes == ["> Add a key with `API_KEY`."]
    assert bare.url not in answer.text


def test_small_talk_is_told_apart_from_questions() -> None:
    for message in ("hi", "Hello!", "thanks", "Thank you so much :)", "good morning", "ok, cool"):
        assert is_small_talk(message), message
    for message in ("hi, how do I add a key?", "thanks; what is HTTPAdapter?", "auth", "API key"):
        assert not is_small_talk(message), message
