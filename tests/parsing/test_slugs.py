"""Slugs, uniqueness and heading text behave like Python-Markdown's toc and attr_list."""

from __future__ import annotations

import pytest

from citewise.parsing.slugs import heading_text, slugify, split_attr_list, unique


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Install", "install"),
        ("Get Started With The Package", "get-started-with-the-package"),
        ("Streaming, Events, And Citations", "streaming-events-and-citations"),
        ("OpenAI-Compatible API", "openai-compatible-api"),
        ("é café", "e-cafe"),
        ("Über-große Änderung", "uber-groe-anderung"),
        ("C++ & C#", "c-c"),
        ("--flag", "-flag"),
        ("snake_case_name", "snake_case_name"),
        ("  padded   words  ", "padded-words"),
        ("100% sure?", "100-sure"),
        ("", ""),
    ],
)
def test_slugify(text: str, slug: str) -> None:
    assert slugify(text) == slug


@pytest.mark.parametrize(
    ("anchors", "expected"),
    [
        (["a", "a", "a"], ["a", "a_1", "a_2"]),
        (["a", "a_1", "a"], ["a", "a_1", "a_2"]),
        (["a", "a", "a_1"], ["a", "a_1", "a_2"]),
        (["", ""], ["_1", "_2"]),
        (["x_3", "x_3"], ["x_3", "x_4"]),
    ],
)
def test_unique_numbers_repeats_in_order(anchors: list[str], expected: list[str]) -> None:
    used: set[str] = set()
    assert [unique(anchor, used) for anchor in anchors] == expected
    assert used == set(expected)


def test_unique_skips_reserved_ids() -> None:
    used = {"setup_1"}
    assert [unique("setup", used) for _ in range(3)] == ["setup", "setup_2", "setup_3"]


@pytest.mark.parametrize(
    ("heading", "text", "anchor"),
    [
        ("Foo { #custom }", "Foo", "custom"),
        ("Foo {#custom}", "Foo", "custom"),
        ("Foo {: #custom .wide }", "Foo", "custom"),
        ("Foo { .wide id=other }", "Foo", "other"),
        ("Foo { .wide }", "Foo", None),
        ("Foo{#glued}", "Foo{#glued}", None),  # attr_list needs a space before the brace
        ("Plain", "Plain", None),
    ],
)
def test_split_attr_list(heading: str, text: str, anchor: str | None) -> None:
    assert split_attr_list(heading) == (text, anchor)


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("`a<b>` <em>x</em> [link](u.md)", "a<b> x link"),
        ("__init__ method", "init method"),
        ("`__init__` dunder", "__init__ dunder"),
        ("Foo *bar* _baz_ snake_case_x", "Foo bar baz snake_case_x"),
        ("**bold** and ***both***", "bold and both"),
        (r"Foo \*bar\*", "Foo *bar*"),
        ("A &amp; B", "A & B"),
        ("![logo](x.png) Title", "Title"),
        ("<https://x.com> auto", "https://x.com auto"),
        ('<span class="x">Tagged</span> text', "Tagged text"),
        ("a < b > c", "a < b > c"),
        ("[`code` link](a.md#x)", "code link"),
        ("`` a ` b ``", "a ` b"),
        ("`code   with  spaces`   and   more", "code with spaces and more"),
        ("[undefined][ref]", "[undefined][ref]"),
    ],
)
def test_heading_text(source: str, text: str) -> None:
    assert heading_text(source) == text


def test_heading_text_reference_links_need_a_definition() -> None:
    assert heading_text("[text][Ref] and [short]", references={"ref", "short"}) == "text and short"
    assert heading_text("[text][other]", references={"ref"}) == "[text][other]"
