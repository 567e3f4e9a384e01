"""BM25 terms for the PostgreSQL store, tokenized exactly as the SQLite store's FTS5 index does.

The SQLite store ranks with FTS5 (``porter unicode61 remove_diacritics 2``, a second index of
CJK bigrams). To rank alike, the PostgreSQL store asks that same tokenizer for its terms: an
in-memory SQLite database (the standard library's) holds an FTS5 table with the same
tokenizer, and its ``fts5vocab`` table lists each text's tokens. No re-implementation of
Porter or unicode61 can drift from it, and no new dependency is needed. Scores then follow
FTS5's ``bm25()`` formula (k1 1.2, b 0.75, idf floored at 1e-6), over a postings table.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from citewise.store.cjk import cjk_grams, has_cjk
from citewise.store.text import MAX_TERMS, STOPWORDS, WORD, query_terms

__all__ = ["Phrases", "TermCounts", "bm25_sql", "document_terms", "query_phrases"]

K1 = 1.2
B = 0.75
# Main index and CJK bigram index, as SQLite's chunks_fts and chunks_cjk; postings of text
# whose two forms tokenize alike are stored once, as BOTH.
MAIN, CJK, BOTH = 0, 1, 2
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
    """One chunk's terms in the main and the CJK index: counts and lengths (in tokens)."""

    main: Counter[str]
    cjk: Counter[str]

    @property
    def lengths(self) -> list[int]:
        return [self.main.total(), self.cjk.total()]

    def indexes(self) -> list[tuple[int, Counter[str], int]]:
        """(index, term counts, length) to store: once as BOTH when the two are the same."""
        if self.main is self.cjk or self.main == self.cjk:
            return [(BOTH, self.main, self.main.total())]
        return [(MAIN, self.main, self.main.total()), (CJK, self.cjk, self.cjk.total())]


def document_terms(texts: Sequence[str]) -> list[TermCounts]:
    """The BM25 terms of each chunk text, as FTS5 indexes it (text, and its CJK bigram form)."""
    main = _counts(texts)
    grams = [cjk_grams(t) for t in texts]
    # Most text has no CJK and is NFKC already: its bigram form is itself, tokenized once.
    differ = [i for i, (t, g) in enumerate(zip(texts, grams, strict=True)) if t != g]
    other = dict(zip(differ, _counts([grams[i] for i in differ]), strict=True))
    return [TermCounts(m, other.get(i, m)) for i, m in enumerate(main)]


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
BM25_SQL = """
WITH stats AS (
    SELECT n_chunks::float8 AS n, tokens[%(idx)s + 1]::float8 / greatest(n_chunks, 1) AS avgdl
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
), scored AS (
    SELECT h.rid, sum(
        CASE WHEN h.idf <= 0 THEN 1e-6 ELSE h.idf END * h.tf * ({k1} + 1)
        / (h.tf + {k1} * (1 - {b} + {b} * h.dl / stats.avgdl))
    ) AS score
    FROM weighted h CROSS JOIN stats {join}
    GROUP BY h.rid
), top AS MATERIALIZED (
    SELECT rid, score FROM scored ORDER BY score DESC, rid LIMIT %(k)s
)
SELECT s.score, {columns} FROM top s JOIN chunks c ON c.rid = s.rid
ORDER BY s.score DESC, s.rid
"""


def bm25_sql(where: str, columns: str) -> str:
    """The BM25 query; ``where`` filters chunks aliased ``c`` ("true": no filter, no join)."""
    join = "" if where == "true" else f"JOIN chunks c ON c.rid = h.rid WHERE {where}"
    return BM25_SQL.format(k1=K1, b=B, join=join, columns=columns)
