"""Code identifiers as whole keyword terms: ``snake_case``, ``ENV_VARS``, ``dotted.paths``, flags.

The word tokenizer splits ``LGOS_OPENAI_API_PREFIX`` into ``lgos openai api prefix``, so a
search for the variable ranks every section that happens to use those four words alike. Every
store therefore keeps a second, small index of each chunk's identifiers as whole terms (beside
their parts, which stay in the word index), and a query that names identifiers ranks the
chunks holding them first (see ``tier_scores``). One function extracts them for all stores,
so the SQLite, PostgreSQL and memory stores agree on what an identifier is.

What counts as an identifier (case folded, ASCII names ``[A-Za-z_][A-Za-z0-9_]*``):

- a name with an underscore and a letter: ``snake_case``, ``ENV_VAR``, ``__init__``, ``_private``;
- a dotted path of two or more names, not all one letter (``e.g`` is not one):
  ``requests.Session.mount``, ``r.status_code``, ``api.py``. Every run of two or more of its
  names is a term too (``session.mount``), so a partial path finds the full one;
- a command-line flag: ``--site-url``, ``-v``;
- a plain word called with nothing, ``json()``; a path's last name called gives one too, so
  ``r.json(x)`` holds ``json()``. Compound names drop the call: ``get_settings()`` is
  ``get_settings``.

``CamelCase`` needs nothing here: the word tokenizer already keeps ``ChatOpenAI`` whole. Words
joined by hyphens (``well-known``) are prose, not identifiers, except after ``--``.

Where a chunk defines an identifier it also holds a definition term, the identifier and
``DEFINED`` (``lgos_openai_api_prefix=``): its anchor (API reference entries are anchored at the
qualified name, ``requests.Session.mount``; a plain last name defines its call too, ``mount()``)
and an identifier that starts a line outside code blocks (a table's first cell, a list item's
term, a heading). Only the terms naming the defined thing: ``session.mount``, not the parent
``requests.session``. A query searches each identifier and its definition term
(``identifier_query``), so the section that defines it ranks above those that use it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable, Mapping
from typing import TypeVar

__all__ = [
    "DEFINED",
    "FTS5_TOKENIZER",
    "MAX_QUERY_IDENTIFIERS",
    "document_identifiers",
    "identifier_query",
    "identifier_text",
    "name_spans",
    "query_identifiers",
    "tier_scores",
]

DEFINED = "="
MAX_QUERY_IDENTIFIERS = 8
# The terms below hold only [a-z0-9_.()=-]: FTS5's unicode61 keeps such a run one token when
# these are token characters, so the identifier index stores and matches them whole.
FTS5_TOKENIZER = "unicode61 tokenchars '_.-()='"

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# Not inside a longer word, path or hyphenated word: ``pre-commit`` holds no flag ``-commit``.
_START = r"(?<![A-Za-z0-9_.\-])"
_FLAG = re.compile(
    _START + r"(?:--[A-Za-z0-9][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*|-[A-Za-z](?![A-Za-z0-9_\-]))"
)
_PATH = re.compile(_START + rf"{_NAME}(?:\.{_NAME})*(?P<call>\(\)?)?")
# The names of _PATH that can hold a term: an underscore, a dot then a name, or a call
# before the first name ends (a sentence's last word has none). Prose is mostly plain words,
# which this skips inside the regex engine instead of building and discarding a match for
# each (identifier extraction was a third of a build's time: benchmarks/peers.md).
_TERM_PATH = re.compile(
    _START + r"(?=[A-Za-z0-9]*(?:_|\.[A-Za-z_]|\())" + _PATH.pattern[len(_START) :]
)
# Where a term can be: an underscore, a dot then a name, or a name called. _TERM_PATH matches
# only at the start of a run of name characters (its look-behind) whose first name holds one
# of these marks, so it is tried only at the runs that hold one, instead of having its
# look-behind run at every character of the line (most of a build's identifier time). Each
# pattern starts with its literal, which the regex engine finds fastest.
_PATH_MARK = re.compile(r"[._(](?:(?<=\.)(?=[A-Za-z_])|(?<=_)|(?<=[A-Za-z0-9]\())")
_DOT_NAME = re.compile(r"\.[A-Za-z_]")
_CALL = re.compile(r"\((?<=[A-Za-z0-9]\()")
# A flag starts with a hyphen then a letter (or a second hyphen then a letter or digit), at
# the start of a line or after a character no name holds: hyphens inside words (``T-cell``)
# are most of prose's.
_FLAG_MARK = re.compile(r"-(?<![A-Za-z0-9_.\-]-)(?:-[A-Za-z0-9]|[A-Za-z](?![A-Za-z0-9_\-]))")
# A name called with nothing (``json()``): called with arguments, a name holds a term only
# when it is compound or a path (``r.json(x)``), which an underscore or a dot shows already.
_CALLED = re.compile(r"\(\)(?<=[A-Za-z0-9]\(\))")
_IN_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _may_hold_path(text: str) -> bool:
    return (
        "_" in text
        or ("." in text and _DOT_NAME.search(text) is not None)
        or ("(" in text and _CALL.search(text) is not None)
    )


def _may_hold_term(text: str) -> bool:
    """Whether ``text`` has a mark a term needs (most chunks of prose have none; a match
    without one names no term: ``TNF(alpha)``, ``e.g.``)."""
    return (
        "_" in text
        or ("." in text and _DOT_NAME.search(text) is not None)
        or ("()" in text and _CALLED.search(text) is not None)
        or ("-" in text and _FLAG_MARK.search(text) is not None)
    )


def _flag_matches(line: str) -> list[re.Match[str]]:
    """``_FLAG.finditer(line)``'s matches: each starts where _FLAG_MARK matches."""
    if "-" not in line:
        return []
    found = (_FLAG.match(line, mark.start()) for mark in _FLAG_MARK.finditer(line))
    return [match for match in found if match is not None]


def _path_matches(line: str) -> list[re.Match[str]]:
    """``_TERM_PATH.finditer(line)``'s matches, tried only at the runs holding a mark."""
    if not _may_hold_path(line):
        return []
    found: list[re.Match[str]] = []
    end = 0  # no match starts before: the last match's end, or past a run already tried
    for mark in _PATH_MARK.finditer(line):
        start = mark.start() - (mark.group() == "(")  # a call's mark is the name before it
        while start > end and line[start - 1] in _IN_NAME:
            start -= 1
        if start < end or (start > 0 and line[start - 1] in _IN_NAME):
            continue  # inside a run that started before ``end``: no match starts in it
        match = _TERM_PATH.match(line, start)
        end = match.end() if match is not None else max(end, mark.end())
        if match is not None:
            found.append(match)
    return found


# What may come before a defining identifier on its line: indentation, heading marks, quote
# marks, table bars, list bullets and numbers, code backticks, bold or italic marks.
# Where a line that defines something starts: a table row, list item, heading or quote mark
# (then the term, maybe in backticks or bold), or an RST field (``:param name:``).
_BLOCK = re.compile(r"\s*(?:\||[*+\-]\s|\d+[.)]\s|#+\s|>(?!>)\s?)")
_LEAD = re.compile(
    r"\s*:(?:param|parameter|arg|argument|key|keyword|kwarg|ivar|cvar|var)"
    r"(?:\s+[\w.\[\], |]+?)?\s+(?=\w+:)"
    r"|(?:\s*(?:\||[*+\-]\s|\d+[.)]\s|#+\s|>(?!>)\s?))*\s*[`*]*"
)
_FENCE = re.compile(r"\s*(```|~~~)")


def _is_compound(name: str) -> bool:
    """A single name that is an identifier by itself: it joins words with underscores."""
    return "_" in name and any(ch.isalpha() for ch in name)


def _terms_at(match: re.Match[str]) -> list[tuple[str, bool]]:
    """The identifier terms of one flag or name match (lowercase; none for a plain word),
    each with whether it names what the match names: a path's suffixes do (``session.mount``
    for ``requests.Session.mount``), its other runs name a parent (``requests.session``)."""
    text = match.group(0).lower()
    if text.startswith("-"):
        return [(text, True)]
    call = match.group("call")
    names = text.rstrip("()").split(".")
    last = len(names) - 1
    terms = [(name, i == last) for i, name in enumerate(names) if _is_compound(name)]
    if len(names) > 1 and any(len(name) > 1 for name in names):
        terms += [
            (".".join(names[i:j]), j == len(names))
            for i in range(len(names))
            for j in range(i + 2, len(names) + 1)
        ]
    # A plain word only when called with nothing (``json()``): ``Lp(a)`` or ``item(s)`` in
    # prose is no call; a path's last name with any arguments is one (``r.json(x)``).
    if call and not _is_compound(names[-1]) and (call == "()" or len(names) > 1):
        terms.append((names[-1] + "()", True))
    return list(dict.fromkeys(terms))


def _matches(line: str) -> list[tuple[int, int, list[tuple[str, bool]]]]:
    found = [(m.start(), m.end(), _terms_at(m)) for m in _flag_matches(line)]
    found += [(m.start(), m.end(), _terms_at(m)) for m in _path_matches(line)]
    return sorted(f for f in found if f[2])


def _normalized(text: str) -> str:
    # ASCII text is its own NFKC form: most chunks skip the normalization.
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def _line_terms(line: str) -> list[tuple[int, list[tuple[str, bool]]]]:
    return [(start, terms) for start, _, terms in _matches(line)]


def _weighted(terms: list[tuple[str, bool]], defining: bool) -> list[str]:
    out: list[str] = []
    for term, names_it in terms:
        out += [term, term + DEFINED] if defining and names_it else [term]
    return out


def document_identifiers(text: str, anchor: str = "") -> list[str]:
    """Every identifier term of a chunk, once per occurrence (definitions weigh more)."""
    normal = _normalized(text)
    # A name or a flag never spans a line break, so the text is searched once, not line by
    # line (most lines of a chunk that may hold a term hold none).
    found = _matches(normal) if _may_hold_term(normal) else []
    out = _text_terms(normal, found) if found else []
    for _, terms in _line_terms(anchor) if anchor else ():
        last = terms[-1][0].rsplit(".", 1)[-1] if "." in terms[-1][0] else ""
        if last and not _is_compound(last) and not last.startswith("-"):
            terms = [*terms, (last + "()", True)]
        out += _weighted(terms, True)
    return out


def _text_terms(normal: str, found: list[tuple[int, int, list[tuple[str, bool]]]]) -> list[str]:
    """The terms of ``found`` (``normal``'s matches, in order), each weighed by its line: one
    that starts a block outside code may define, a fence line holds none."""
    out: list[str] = []
    in_code = False
    previous = ""
    at, line_start = 0, 0
    for line, whole in zip(normal.splitlines(), normal.splitlines(keepends=True), strict=True):
        line_end = line_start + len(whole)
        fence = ("`" in line or "~" in line) and _FENCE.match(line) is not None
        if fence:
            in_code = not in_code
        elif at < len(found) and found[at][0] < line_end:
            # A line that starts a block may define; a wrapped line of a paragraph never does.
            starts_block = not previous.strip() or _BLOCK.match(line) is not None
            lead = _LEAD.match(line) if starts_block and not in_code else None
            first = lead.end() if lead else -1
            while at < len(found) and found[at][0] < line_end:
                start, end, terms = found[at]
                # ``NAME=value`` shows a value, it does not define the name.
                defining = start - line_start == first and not line.startswith(
                    "=", end - line_start
                )
                out += _weighted(terms, defining)
                at += 1
        while at < len(found) and found[at][0] < line_end:  # a fence line's: none
            at += 1
        if not fence:
            previous = line
        line_start = line_end
    return out


def identifier_text(text: str | None, anchor: str | None = "") -> str:
    """A chunk's identifier terms, space separated: the identifier index's column."""
    return " ".join(document_identifiers(text or "", anchor or ""))


def query_identifiers(text: str) -> list[str]:
    """The distinct identifier terms a query names, at most ``MAX_QUERY_IDENTIFIERS``."""
    found: list[str] = []
    for line in _normalized(text).splitlines():
        for _, terms in _line_terms(line):
            found += [term for term, _ in terms]
    return list(dict.fromkeys(found))[:MAX_QUERY_IDENTIFIERS]


def identifier_query(text: str) -> list[str]:
    """The identifier-index terms a query searches: each identifier, then its definition."""
    return [form for term in query_identifiers(text) for form in (term, term + DEFINED)]


_Key = TypeVar("_Key", bound=Hashable)


def tier_scores(hits: Mapping[_Key, tuple[float, float, int]]) -> dict[_Key, float]:
    """One score per chunk from its word BM25, identifier BM25 and identifier terms held.

    ``hits`` maps a chunk to (word score, identifier score, how many of the query's
    identifier-index terms it holds: ``identifier_query``, so a definition counts too). The
    score is ``words + identifiers + held × T`` with ``T`` the best word score plus the best
    identifier score among ``hits``: a chunk holding more of the query's terms always ranks
    above one holding fewer, and within a tier the two BM25 scores decide. The stores
    compute the same in SQL; this is the reference (memory store).
    """
    if not hits:
        return {}
    top = max(w for w, _, _ in hits.values()) + max(i for _, i, _ in hits.values())
    return {key: w + i + m * top for key, (w, i, m) in hits.items()}


def name_spans(text: str) -> list[tuple[int, int, str]]:
    """Each flag and (dotted) name of ``text`` as written (case kept, a call's parentheses
    dropped), with its span: the identifier index's tokenizer, which the grounding check
    also uses to read sections, so both agree on where a name starts and ends."""
    found = [(m.start(), m.end(), m.group(0)) for m in _FLAG.finditer(text)]
    for match in _PATH.finditer(text):
        name = match.group(0)
        if match.group("call"):
            name = name[: match.start("call") - match.start()]
        found.append((match.start(), match.start() + len(name), name))
    return sorted(found)
