"""docs/cli.md's reference part is what the parser says: it cannot drift from the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from citewise.cli.reference import BEGIN, END, reference, rewritten

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_the_page_matches_the_parser() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert page == rewritten(page), (
        "docs/cli.md is out of date: python -m citewise.cli.reference --write docs/cli.md"
    )


def test_every_command_and_subcommand_is_documented() -> None:
    text = reference()
    for command in (
        "index", "sections", "search", "ask", "eval", "bench beir", "bench embed",
        "bench latency", "serve", "mcp", "kb create", "kb list", "kb show",
        "kb delete", "kb search", "doc add", "doc list", "doc delete",
    ):  # fmt: skip
        assert f"### citewise {command}\n" in text or f"#### citewise {command}\n" in text
    assert "`--top-k` `N`" in text and "`--quiet`, `-q`" in text


def test_a_page_without_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        rewritten("# CLI\n")
    assert BEGIN in PAGE.read_text(encoding="utf-8") and END in PAGE.read_text(encoding="utf-8")
