"""The flags every search command shares, and how parsed flags become search overrides."""

from __future__ import annotations

import argparse

import pytest

from citewise.cli import build_parser
from citewise.cli.common import add_search_flags, search_overrides
from citewise.kb import OPTION_NAMES, SearchOptions


def parse(*argv: str, answers: bool = False) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_search_flags(parser, answers=answers)
    return parser.parse_args(list(argv))


def test_flags_left_out_are_not_overrides() -> None:
    assert search_overrides(parse()) == {}


def test_every_flag_names_a_search_option() -> None:
    args = parse(
        "--top-k", "3", "--search-type", "vector", "--query-rewrite", "hyde", "--rerank", "llm",
        "--rerank-candidates", "30", "--context-window", "2", "--scope", "demo",
        "--doc-id", "a.md", "--doc-id", "b.md", "--page-prefix", "demo/", "--verify", "warn",
        "--vector-weight", "0.7", "--chat-model", "m", "--reranker-dir", "ce/",
        "--no-collapse-sections", "--candidates-per-ranker", "40", "--context-scope", "page",
        "--metadata", "author=Ada", "--metadata", "subject=Engines", answers=True,
    )  # fmt: skip
    overrides = search_overrides(args)
    assert overrides == {
        "top_k": 3,
        "search_type": "vector",
        "query_rewrite": "hyde",
        "rerank": "llm",
        "rerank_candidates": 30,
        "context_window": 2,
        "collapse_sections": False,
        "scope": "demo",
        "doc_ids": ("a.md", "b.md"),
        "page_prefix": "demo/",
        "verify": "warn",
        "vector_weight": 0.7,
        "chat_model": "m",
        "reranker_dir": "ce/",
        "candidates_per_ranker": 40,
        "context_scope": "page",
        "doc_metadata": {"author": "Ada", "subject": "Engines"},
    }
    # The agentic budget is `citewise ask`'s own (--agent-rewrites, --no-agent-grading).
    agentic = {"agent_rewrites", "agent_grading"}
    assert set(overrides) == set(OPTION_NAMES) - agentic
    with pytest.raises(SystemExit):  # a search writes no answer to check
        parse("--verify", "warn")
    assert SearchOptions().merged(overrides).doc_ids == ("a.md", "b.md")


def test_a_bad_candidates_per_ranker_names_the_flag() -> None:
    from citewise.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="--candidates-per-ranker 0"):
        search_overrides(parse("--candidates-per-ranker", "0"))


def test_the_flags_do_not_warn(capsys: pytest.CaptureFixture[str]) -> None:
    parse("--top-k", "2", "--search-type", "full_text")
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "-k", "2"],
        ["search", "q", "--mode", "keyword"],
        ["ask", "q", "-k", "2"],
        ["kb", "search", "team", "q", "-k", "2"],
    ],
)
def test_the_old_spellings_are_gone(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)
    assert "unrecognized arguments" in capsys.readouterr().err


def test_rewrite_and_reranker_names_are_open_and_checked_when_used() -> None:
    # Any registered name parses; whether it is registered is checked by the service layer.
    assert search_overrides(parse("--rerank", "mine", "--query-rewrite", "theirs")) == {
        "rerank": "mine",
        "query_rewrite": "theirs",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "--top-k", "2"],
        ["ask", "q", "--top-k", "2"],
        ["kb", "search", "team", "q", "--top-k", "2"],
        ["kb", "create", "team", "--top-k", "2"],
    ],
)
def test_search_commands_share_one_vocabulary(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert search_overrides(args) == {"top_k": 2}
