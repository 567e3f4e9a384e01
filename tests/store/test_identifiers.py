"""Identifiers as whole keyword terms: what counts as one, and upgrading a version-2 SQLite file."""

from __future__ import annotations

import logging
import re
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citewise.store import SQLiteStore, identifiers
from citewise.store.identifiers import (
    DEFINED,
    MAX_QUERY_IDENTIFIERS,
    document_identifiers,
    identifier_query,
    query_identifiers,
    tier_scores,
)
from citewise.store.sqlite_schema import SCHEMA_VERSION
from tests.store.support import IDENTIFIER_QUERIES, IDENTIFIER_TEXTS, update


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Set LGOS_OPENAI_API_PREFIX now", ["lgos_openai_api_prefix"]),
        ("snake_case __init__ _private DEMO_", ["snake_case", "__init__", "_private", "demo_"]),
        ("requests.Session.mount", ["requests.session", "requests.session.mount", "session.mount"]),
        ("r.status_code", ["status_code", "r.status_code"]),
        ("Call r.json() or json() then r.get(url)", ["r.json", "json()", "r.get", "get()"]),
        ("get_settings() is snake_case", ["get_settings", "snake_case"]),
        ("pass --site-url, or -v", ["--site-url", "-v"]),
        ("see src/citewise/api.py.", ["api.py"]),
        ("检索中的vector_weight控制", ["vector_weight"]),
        # Prose: no identifiers.
        ("e.g. a well-known, built-in pre-commit hook; U.S. law", []),
        ("Lp(a) and chaperone(s) in 0-dimensional space, v0.12.0, 3_000", []),
        ("ChatOpenAI and CamelCase stay whole words", []),
        # Sentence ends and asides are skipped before the name pattern runs, names kept.
        ("A sentence ends. Another (aside) ends, then cfg.load.", ["cfg.load"]),
        ("Line one.\nsecond_line (x) f(y) and g()", ["second_line", "g()"]),
    ],
)
def test_what_counts_as_an_identifier(text: str, terms: list[str]) -> None:
    assert query_identifiers(text) == terms


def test_a_definition_holds_a_definition_term() -> None:
    table = "| `LGOS_X_Y` | `/v1` | the prefix |"
    prose = "Change it with `LGOS_X_Y`."
    listed = "- `request_to_input(request, messages)`: custom input"
    assert document_identifiers(table) == ["lgos_x_y", "lgos_x_y" + DEFINED]
    assert document_identifiers(prose) == ["lgos_x_y"]
    assert document_identifiers(listed) == ["request_to_input", "request_to_input" + DEFINED]
    # A line of code is no definition; the anchor is (an API entry's qualified name), for
    # the names it ends with, not its parent, and a plain last name's call.
    assert document_identifiers("```\nlgos_x_y = 1\n```") == ["lgos_x_y"]
    assert document_identifiers("get(url)", "requests.Session.get") == [
        "requests.session", "requests.session.get", "requests.session.get" + DEFINED,
        "session.get", "session.get" + DEFINED, "get()", "get()" + DEFINED,
    ]  # fmt: skip
    assert identifier_query("Use LGOS_X_Y") == ["lgos_x_y", "lgos_x_y" + DEFINED]


def test_more_identifiers_held_is_a_higher_tier() -> None:
    scores = tier_scores({1: (50.0, 0.0, 0), 2: (1.0, 0.5, 1), 3: (0.1, 0.1, 2)})
    assert sorted(scores, key=lambda k: -scores[k]) == [3, 2, 1]


@settings(max_examples=200, deadline=1000, database=None)
@given(text=st.text(max_size=80))
def test_query_identifiers_are_safe_fts5_terms(text: str) -> None:
    terms = query_identifiers(text)
    assert len(terms) <= MAX_QUERY_IDENTIFIERS and len(set(terms)) == len(terms)
    assert all(re.fullmatch(r"[a-z0-9_.()\-]+", term) for term in terms)
    assert identifier_query(text) == [f for t in terms for f in (t, t + DEFINED)]


# Name characters, the marks around them, separators and non-ASCII: where the look-behinds and
# the runs of name characters meet.
_NAMEISH = st.text(alphabet="aZ09_.-()= \t\n`|*#:é检-_.(", max_size=60)


@settings(max_examples=3000, deadline=1000, database=None)
@given(line=_NAMEISH)
def test_the_marked_searches_find_what_the_patterns_find(line: str) -> None:
    """The flags and names found from their marks are the patterns' own matches everywhere."""
    spans = [m.span() for m in identifiers._TERM_PATH.finditer(line)]
    assert [m.span() for m in identifiers._path_matches(line)] == spans
    flags = [m.span() for m in identifiers._FLAG.finditer(line)]
    assert [m.span() for m in identifiers._flag_matches(line)] == flags
    # The prefilter passes every line with a term (a match may name none: ``a(b``, ``e.g``).
    if identifiers._matches(line):
        assert identifiers._may_hold_term(line)


def _line_by_line(text: str) -> list[str]:
    """document_identifiers without an anchor as it was written first: each line on its own."""
    out: list[str] = []
    in_code, previous = False, ""
    for line in identifiers._normalized(text).splitlines():
        if identifiers._FENCE.match(line):
            in_code = not in_code
            continue
        starts_block = not previous.strip() or identifiers._BLOCK.match(line) is not None
        previous = line
        lead = identifiers._LEAD.match(line) if starts_block and not in_code else None
        first = lead.end() if lead else -1
        for start, end, terms in identifiers._matches(line):
            defining = start == first and not line.startswith("=", end)
            out += identifiers._weighted(terms, defining)
    return out


# Lines of names, marks, fences, block starts and every line break splitlines() knows.
_LINE = st.one_of(
    st.text(alphabet="aZ09_.-()= \t`~|*#>:1é检", max_size=30),
    st.sampled_from(["```", "```py a_b --x", "  ~~~ x.y()", "| a_b | c |", "- `a.b`: c", ""]),
)
_LINES = st.lists(_LINE, max_size=8).flatmap(
    lambda lines: st.lists(
        st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\x1c", "\x85", "\u2028", "\n\n"]),
        min_size=len(lines),
        max_size=len(lines),
    ).map(lambda breaks: "".join(a + b for a, b in zip(lines, breaks, strict=True)))
)


@settings(max_examples=3000, deadline=1000, database=None)
@given(text=_LINES)
def test_a_text_searched_whole_gives_what_its_lines_give(text: str) -> None:
    assert document_identifiers(text) == _line_by_line(text)
    assert document_identifiers(text + "```\n" + text) == _line_by_line(text + "```\n" + text)


def test_a_version_2_file_gains_the_identifier_index_when_opened(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SQLiteStore(tmp_path)
    kb = store.create("kb")
    kb.apply([update(f"i{n}", [text]) for n, text in enumerate(IDENTIFIER_TEXTS)])
    want = {q: kb.keyword(q, 10) for q in IDENTIFIER_QUERIES}
    store.close()
    conn = sqlite3.connect(tmp_path / "kb.sqlite")
    for trigger in ("chunks_ident_ai", "chunks_ident_ad", "chunks_ident_au"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE chunks_ident")
    conn.execute("UPDATE meta SET value = '2' WHERE key = '_schema'")
    conn.commit()
    conn.close()

    again = SQLiteStore(tmp_path)
    with caplog.at_level(logging.WARNING, logger="citewise.store.sqlite_keyword"):
        got = {q: again.open("kb").keyword(q, 10) for q in IDENTIFIER_QUERIES}
    assert got == want
    assert "'kb' predates the identifier index: adding it (5 chunks)" in caplog.text
    check = sqlite3.connect(tmp_path / "kb.sqlite")
    assert check.execute("SELECT value FROM meta WHERE key = '_schema'").fetchone() == (
        SCHEMA_VERSION,
    )
    check.close()
    # Written after the upgrade: the triggers keep the new index in step.
    again.open("kb").apply([update("late", ["Use NEW_SETTING_NAME here"])])
    assert [c.doc_id for c, _ in again.open("kb").keyword("NEW_SETTING_NAME", 3)][0] == "late"
    again.close()
