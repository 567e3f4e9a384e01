"""Chunks: size limit, heading prefix, block-aware splits and stable ids."""

from __future__ import annotations

import re

import pytest

from citewise.chunking import chunk_id, chunk_sections
from citewise.models import Chunk, Section
from citewise.parsing.markdown import fenced_blocks, parse_markdown
from tests.conftest import LGOS

# The shared data folder (CITEWISE_TEST_DATA in a worktree outside the project folder).
LGOS_DOCS = LGOS / "docs"


def make_section(text: str, *, doc_id: str = "guide.md", path: tuple[str, ...] = ()) -> Section:
    heading_path = path or ("Run The Server", "Settings")
    return Section(
        doc_id=doc_id,
        title=heading_path[-1],
        heading_path=heading_path,
        level=len(heading_path),
        anchor="settings",
        url="https://s.io/1.0/guide/#settings",
        page="guide/",
        text=text,
        scope="guide",
        page_number=None,
    )


def body(chunk: Chunk) -> str:
    prefix = " > ".join(chunk.heading_path) + "\n\n"
    assert chunk.text.startswith(prefix)
    return chunk.text[len(prefix) :]


def assert_valid_fences(text: str) -> None:
    """Every fence line in ``text`` belongs to a closed fenced block."""
    lines = text.split("\n")
    fenced = {i for start, end in fenced_blocks(lines) for i in range(start, end)}
    for i, line in enumerate(lines):
        if re.match(r"^\s*(```|~~~)", line):
            assert i in fenced, f"dangling fence at line {i}: {text!r}"


def paragraphs(count: int, size: int = 150) -> str:
    return "\n\n".join(f"Paragraph {n}. " + "word " * ((size - 15) // 5) for n in range(count))


def test_small_section_is_one_chunk_with_heading_prefix() -> None:
    section = make_section("Set `PORT` to change the port.\n\n- one\n- two")
    (chunk,) = chunk_sections([section])
    expected = "Run The Server > Settings\n\nSet `PORT` to change the port.\n\n- one\n- two"
    assert chunk.text == expected
    assert (chunk.position, chunk.section_index) == (0, 0)
    assert (chunk.url, chunk.anchor, chunk.title, chunk.page) == (
        section.url,
        section.anchor,
        section.title,
        section.page,
    )
    assert (chunk.heading_path, chunk.scope, chunk.doc_id) == (
        section.heading_path,
        "guide",
        "guide.md",
    )


def test_empty_section_still_gives_a_chunk() -> None:
    (chunk,) = chunk_sections([make_section("")])
    assert chunk.text == "Run The Server > Settings"


@pytest.mark.parametrize("max_chars", [200, 500, 2000])
def test_long_section_splits_between_paragraphs(max_chars: int) -> None:
    text = paragraphs(30)
    chunks = chunk_sections([make_section(text)], max_chars=max_chars)
    assert len(chunks) > 1
    assert all(len(c.text) <= max_chars for c in chunks)
    # Nothing lost, nothing cut: the paragraphs come back whole and in order.
    assert "\n\n".join(body(c) for c in chunks) == text
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert {c.section_index for c in chunks} == {0}


def test_code_block_is_never_split_when_it_fits() -> None:
    code = "```python\n" + "\n".join(f"x_{n} = {n}" for n in range(20)) + "\n```"
    text = paragraphs(2, 120) + "\n\n" + code + "\n\n" + paragraphs(2, 120)
    chunks = chunk_sections([make_section(text)], max_chars=len(code) + 60)
    assert sum(code in c.text for c in chunks) == 1
    for chunk in chunks:
        assert len(chunk.text) <= len(code) + 60
        assert_valid_fences(chunk.text)


@pytest.mark.parametrize(
    ("fence", "closer"), [('```python title="app.py"', "```"), ("~~~yaml", "~~~"), ("````", "````")]
)
def test_long_code_block_splits_between_lines_reopening_the_fence(fence: str, closer: str) -> None:
    lines = [f"value_{n} = compute({n})  # step {n}" for n in range(120)]
    text = "Intro.\n\n" + fence + "\n" + "\n".join(lines) + "\n" + closer + "\n\nOutro."
    chunks = chunk_sections([make_section(text)], max_chars=400)
    assert len(chunks) > 4
    code_lines: list[str] = []
    for chunk in chunks:
        assert len(chunk.text) <= 400
        assert_valid_fences(chunk.text)
        part = body(chunk).split("\n")
        if fence in part:
            assert part[part.index(fence) + 1 :].count(closer) == 1
            start = part.index(fence) + 1
            code_lines.extend(part[start : part.index(closer, start)])
    assert code_lines == lines


def test_indented_code_block_in_a_tab_keeps_its_indent() -> None:
    inner = "\n".join(f"    print({n})" for n in range(80))
    text = '=== "Python"\n\n    ```python\n' + inner + "\n    ```"
    chunks = chunk_sections([make_section(text)], max_chars=300)
    for chunk in chunks[1:]:
        assert body(chunk).startswith("    ```python\n")
        assert body(chunk).endswith("\n    ```")
        assert_valid_fences(chunk.text)


def test_code_line_longer_than_the_limit_is_cut() -> None:
    text = "```\n" + "x" * 1000 + "\n```"
    chunks = chunk_sections([make_section(text)], max_chars=300)
    assert all(len(c.text) <= 300 for c in chunks)
    assert "".join(body(c).split("\n")[1] for c in chunks) == "x" * 1000


def test_long_table_splits_between_rows_repeating_its_header() -> None:
    header = "| Setting | Default | Meaning |\n| --- | :---: | --- |"
    rows = [f"| `SETTING_{n}` | `{n}` | what setting {n} does |" for n in range(80)]
    text = "Settings:\n\n" + header + "\n" + "\n".join(rows) + "\n\nAfter the table."
    chunks = chunk_sections([make_section(text)], max_chars=500)
    seen: list[str] = []
    for chunk in chunks:
        assert len(chunk.text) <= 500
        part = body(chunk)
        if "`SETTING_" in part:
            assert header in part
            seen.extend(line for line in part.split("\n") if line.startswith("| `SETTING_"))
    assert seen == rows
    assert sum(header in c.text for c in chunks) > 2


def test_table_without_leading_pipes() -> None:
    rows = [f"name{n} | value {n}" for n in range(60)]
    text = "a | b\n--- | ---\n" + "\n".join(rows)
    chunks = chunk_sections([make_section(text)], max_chars=200)
    assert all(body(c).startswith("a | b\n--- | ---\n") for c in chunks)


def test_long_paragraph_is_cut_at_spaces() -> None:
    text = " ".join(f"word{n}" for n in range(400))
    chunks = chunk_sections([make_section(text)], max_chars=250)
    assert all(len(c.text) <= 250 for c in chunks)
    assert " ".join(" ".join(body(c).split("\n")) for c in chunks) == text


def test_oversized_heading_path_is_shortened() -> None:
    section = make_section(paragraphs(5), path=("H" * 400, "Sub"))
    chunks = chunk_sections([section], max_chars=300)
    assert all(len(c.text) <= 300 for c in chunks)
    assert all(c.text.startswith("H" * 100) for c in chunks)


def test_positions_and_section_indexes_count_per_document() -> None:
    sections = [
        make_section(paragraphs(6), doc_id="a.md"),
        make_section("short", doc_id="a.md"),
        make_section("other", doc_id="b.md"),
        make_section("", doc_id="a.md"),
    ]
    chunks = chunk_sections(sections, max_chars=400)
    a = [c for c in chunks if c.doc_id == "a.md"]
    assert [c.position for c in a] == list(range(len(a)))
    assert [c.section_index for c in a][-2:] == [1, 2]
    (b,) = [c for c in chunks if c.doc_id == "b.md"]
    assert (b.position, b.section_index) == (0, 0)


def test_chunk_ids_are_stable_and_content_addressed() -> None:
    sections = [make_section(paragraphs(8)), make_section("tail")]
    first = chunk_sections(sections, max_chars=500)
    again = chunk_sections(sections, max_chars=500)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    assert len({c.chunk_id for c in first}) == len(first)
    assert all(re.fullmatch(r"[0-9a-f]{20}", c.chunk_id) for c in first)
    assert first[0].chunk_id == chunk_id("guide.md", 0, first[0].text)
    changed = chunk_sections([make_section(paragraphs(8)), make_section("tail!")], max_chars=500)
    assert [c.chunk_id for c in changed][:-1] == [c.chunk_id for c in first][:-1]
    assert changed[-1].chunk_id != first[-1].chunk_id


@pytest.mark.parametrize(
    ("doc_id", "position", "text", "other"),
    [
        ("a.md", 0, "x", ("b.md", 0, "x")),
        ("a.md", 0, "x", ("a.md", 1, "x")),
        ("a.md", 0, "x", ("a.md", 0, "y")),
    ],
)
def test_chunk_id_depends_on_each_part(
    doc_id: str, position: int, text: str, other: tuple[str, int, str]
) -> None:
    assert chunk_id(doc_id, position, text) != chunk_id(*other)


def test_too_small_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        chunk_sections([make_section("x")], max_chars=5)


@pytest.mark.parametrize("max_chars", [300, 800, 2000])
def test_every_lgos_chunk_fits_and_keeps_fences_valid(max_chars: int) -> None:
    if not LGOS_DOCS.is_dir():
        pytest.skip(f"LGOS 0.12.0 release not found at {LGOS_DOCS.resolve()}")
    for path in sorted(LGOS_DOCS.rglob("*.md")):
        doc_id = path.relative_to(LGOS_DOCS).as_posix()
        sections = parse_markdown(
            path.read_text(encoding="utf-8"), doc_id=doc_id, site_url="https://s.io/", version="1"
        )
        chunks = chunk_sections(sections, max_chars=max_chars)
        assert {c.section_index for c in chunks} == set(range(len(sections)))
        for chunk in chunks:
            assert len(chunk.text) <= max_chars, (doc_id, chunk.position)
            assert_valid_fences(chunk.text)
