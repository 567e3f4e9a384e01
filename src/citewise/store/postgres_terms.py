"""BM25 terms for the PostgreSQL store, tokenized exactly as the SQLite store's FTS5 index does.

The SQLite store ranks with FTS5 (``porter unicode61 remove_diacritics 2``, a second index of
CJK bigrams). To rank alike, the PostgreSQL store asks that same tokenizer for its terms: an
in-memory SQLite database (the standard library's) holds an FTS5 table with the same
tokenizer, and its ``fts5vocab`` table lists each text's tokens. No re-implementation of
Porter or unicode61 can drift from it, and no new dependency is needed. Scores then follow
FTS5's ``bm25()`` formula (k1 1.2, b 0.75, idf floored at 1e-6), over a postings table.

Identifiers (``store/identifiers.py``) are a fourth kind of posting, as SQLite's
``chunks_ident``; a query naming identifiers is scored as ``store/sqlite_keyword.py`` does.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from citewise.store.cjk import cjk_grams, has_cjk
from citewise.store.identifiers import document_identifiers, identifier_query
from citewise.store.text import MAX_TERMS, STOPWORDS, WORD, query_terms

__all__ = [
    "Phrases",
    "TermCounts",
    "bm25_sql",
    "document_terms",
    "identifier_counts",
    "query_phrases",
]

K1 = 1.2
B = 0.75
# Main index and CJK bigram index, as SQLite's chunks_fts and chunks_cjk; postings of text
# whose two forms tokenize alike are stored once, as BOTH. IDENT: identifiers (chunks_ident).
MAIN, CJK, BOTH, IDENT = 0, 1, 2, 3
# The highest code point: "term" .. "term\U0010ffff" (in "C" collation) is every term with
# that prefix.
_TOP = "\U0010ffff"

_local = threading.local()


def _fts() -> sqlite3.Connection:
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
        )
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        _local.conn = conn
    return conn


def _counts(texts: Sequence[str]) -> list[Counter[str]]:
    """Each text's FTS5 tokens, counted."""
    conn = _fts()
    out: list[Counter[str]] = [Counter() for _ in texts]
    conn.execute("BEGIN")
    try:
        conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(texts))
        for doc, term, n in conn.execute("SELECT doc, term, count(*) FROM v GROUP BY doc, term"):
            out[doc][term] = n
    finally:
        conn.execute("ROLLBACK")
    return out


def _tokens(texts: Sequence[str]) -> list[list[str]]:
    """Each text's FTS5 tokens, in order."""
    conn = _fts()
    out: list[list[str]] = [[] for _ in texts]
    conn.execute("BEGIN")
    try:
        conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(texts))
        for doc, term in conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            out[doc].append(term)
    finally:
        conn.execute("ROLLBACK")
    return out


@dataclass(frozen=True)
class TermCounts:
    """One chunk's terms in the main, CJK and identifier index: counts and lengths (tokens)."""

    main: Counter[str]
    cjk: Counter[str]
    ident: Counter[str]

    @property
    def lengths(self) -> list[int]:
        return [self.main.total(), self.cjk.total(), self.ident.total()]

    def indexes(self) -> list[tuple[int, Counter[str], int]]:
        """(index, term counts, length) to store: main and CJK once as BOTH when the same."""
        if self.main is self.cjk or self.main == self.cjk:
            words = [(BOTH, self.main, self.main.total())]
        else:
            words = [(MAIN, self.main, self.main.total()), (CJK, self.cjk, self.cjk.total())]
        return [*words, (IDENT, self.ident, self.ident.total())]


def identifier_counts(text: str, anchor: str) -> Counter[str]:
    """A chunk's identifier terms, counted (SQLite's chunks_ident holds the same)."""
    return Counter(document_identifiers(text, anchor))


def document_terms(texts: Sequence[str], anchors: Sequence[str]) -> list[TermCounts]:
    """The BM25 terms of each chunk, as FTS5 indexes it (text, its CJK bigram form, and the
    identifiers of its text and anchor)."""
    main = _counts(texts)
    grams = [cjk_grams(t) for t in texts]
    # Most text has no CJK and is NFKC already: its bigram form is itself, tokenized once.
    differ = [i for i, (t, g) in enumerate(zip(texts, grams, strict=True)) if t != g]
    other = dict(zip(differ, _counts([grams[i] for i in differ]), strict=True))
    return [
        TermCounts(m, other.get(i, m), identifier_counts(texts[i], anchors[i]))
        for i, m in enumerate(main)
    ]


@dataclass(frozen=True)
class Phrases:
    """A query for one index: each phrase as a term range ``lo``..``hi`` (a prefix or a term)."""

    index: int
    lo: list[str]
    hi: list[str]


def query_phrases(text: str) -> Phrases | None:
    """The phrases SQLite's MATCH expression for ``text`` holds, tokenized (None: nothing).

    As in the SQLite store, text with CJK characters searches the bigram index (a lone CJK
    character is a prefix of the bigrams it starts); other text the main index. A phrase that
    tokenizes to several tokens counts as that many phrases (FTS5 would need them adjacent).
    """
    if has_cjk(text):
        raw: list[tuple[str, bool]] = []
        for token in WORD.findall(cjk_grams(text).lower()):
            if has_cjk(token):
                raw.append((token, len(token) == 1))
            elif token not in STOPWORDS:
                raw.append((token, False))
        raw = list(dict.fromkeys(raw))[:MAX_TERMS]
        index = CJK
    else:
        raw = [(term, False) for term in query_terms(text)]
        index = MAIN
    lo: list[str] = []
    hi: list[str] = []
    for (_, prefix), tokens in zip(raw, _tokens([t for t, _ in raw]), strict=True):
        for token in tokens:
            lo.append(token)
            hi.append(token + _TOP if prefix else token)
    return Phrases(index, lo, hi) if lo else None


# BM25 over the postings of the kb's chunks, as FTS5's bm25(): idf per phrase over the whole
# knowledge base, the filter only on which chunks may be returned (before the top k). Each
# phrase is its own index range scan (OFFSET 0 keeps the LATERAL from being flattened into a
# join the planner may get wrong); the idf comes from a window count over the same hits, and
# the knowledge base's size from the same snapshot (one statement: never a mix).
_WORDS = """
WITH stats AS (
    SELECT n_chunks::float8 AS n, tokens[%(idx)s + 1]::float8 / greatest(n_chunks, 1) AS avgdl,
        coalesce(tokens[3], 0)::float8 / greatest(n_chunks, 1) AS avgil
    FROM kbs WHERE kb_id = %(kb)s
), q AS (
    SELECT lo, hi, i FROM unnest(%(lo)s::text[], %(hi)s::text[]) WITH ORDINALITY AS q(lo, hi, i)
), hits AS MATERIALIZED (
    SELECT q.i, p.rid, sum(p.tf)::float8 AS tf, max(p.dl)::float8 AS dl
    FROM q CROSS JOIN LATERAL (
        SELECT rid, tf, dl FROM postings WHERE kb_id = %(kb)s AND idx IN (%(idx)s, 2)
        AND term >= q.lo AND term <= q.hi OFFSET 0) p
    GROUP BY q.i, p.rid
), weighted AS (
    SELECT rid, tf, dl, ln((n - count(*) OVER w + 0.5) / (count(*) OVER w + 0.5)) AS idf
    FROM hits, stats WINDOW w AS (PARTITION BY i)
)"""
# One phrase's BM25 in one chunk; {avg} is the mean length of the index it searches.
_TERM = (
    "CASE WHEN h.idf <= 0 THEN 1e-6 ELSE h.idf END * h.tf * ({k1} + 1)"
    " / (h.tf + {k1} * (1 - {b} + {b} * h.dl / stats.{avg}))"
)
BM25_SQL = (
    _WORDS
    + """, scored AS (
    SELECT h.rid, sum({term}) AS score
    FROM weighted h CROSS JOIN stats {join}
    GROUP BY h.rid
), top AS MATERIALIZED (
    SELECT rid, score FROM scored ORDER BY score DESC, rid LIMIT %(k)s
)
SELECT s.score, {columns} FROM top s JOIN chunks c ON c.rid = s.rid
ORDER BY s.score DESC, s.rid
"""
)
# With identifiers: each chunk's word score, identifier score and count of the query's
# identifiers it holds, combined as identifiers.tier_scores (and sqlite_keyword.py) do.
TIERED_SQL = (
    _WORDS
    + """, words AS (
    SELECT h.rid, sum({term}) AS s FROM weighted h CROSS JOIN stats GROUP BY h.rid
), iq AS (
    SELECT term, i FROM unnest(%(idents)s::text[]) WITH ORDINALITY AS iq(term, i)
), ihits AS MATERIALIZED (
    SELECT iq.i, p.rid, p.tf::float8 AS tf, p.dl::float8 AS dl FROM iq JOIN postings p
    ON p.kb_id = %(kb)s AND p.idx = 3 AND p.term = iq.term
), iweighted AS (
    SELECT rid, tf, dl, ln((n - count(*) OVER w + 0.5) / (count(*) OVER w + 0.5)) AS idf
    FROM ihits, stats WINDOW w AS (PARTITION BY i)
), idents AS (
    SELECT h.rid, sum({iterm}) AS s, count(*) AS m FROM iweighted h CROSS JOIN stats
    GROUP BY h.rid
), combined AS (
    SELECT rid, sum(w) AS w, sum(i) AS i, sum(m) AS m FROM (
        SELECT rid, s AS w, 0::float8 AS i, 0 AS m FROM words
        UNION ALL SELECT rid, 0::float8, s, m FROM idents) x
    GROUP BY rid
), kept AS MATERIALIZED (
    SELECT h.rid, h.w, h.i, h.m FROM combined h {join}
), best AS (SELECT max(w) + max(i) AS t FROM kept
), top AS MATERIALIZED (
    SELECT rid, w + i + m * t AS score FROM kept, best ORDER BY score DESC, rid LIMIT %(k)s
)
SELECT s.score, {columns} FROM top s JOIN chunks c ON c.rid = s.rid
ORDER BY s.score DESC, s.rid
"""
)


def bm25_sql(where: str, columns: str, *, identifiers: bool = False) -> str:
    """The BM25 query; ``where`` filters chunks aliased ``c`` ("true": no filter, no join).

    ``identifiers``: the tiered query, which also takes ``%(idents)s`` (identifier_query).
    """
    join = "" if where == "true" else f"JOIN chunks c ON c.rid = h.rid WHERE {where}"
    term = _TERM.format(k1=K1, b=B, avg="avgdl")
    if not identifiers:
        return BM25_SQL.format(term=term, join=join, columns=columns)
    iterm = _TERM.format(k1=K1, b=B, avg="avgil")
    return TIERED_SQL.format(term=term, iterm=iterm, join=join, columns=columns)


def keyword_params(text: str) -> dict[str, object] | None:
    """The parameters of ``bm25_sql`` for a query (None: nothing to search), with
    ``idents`` set when the query names identifiers."""
    phrases = query_phrases(text)
    idents = identifier_query(text)
    if phrases is None and not idents:
        return None
    params: dict[str, object] = {
        "lo": phrases.lo if phrases else [],
        "hi": phrases.hi if phrases else [],
        "idx": phrases.index if phrases else (CJK if has_cjk(text) else MAIN),
    }
    if idents:
        params["idents"] = idents
    return params
