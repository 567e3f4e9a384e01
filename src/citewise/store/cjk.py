"""BM25 for Chinese, Japanese and Korean text: a second FTS5 index over character bigrams.

FTS5's ``unicode61`` tokenizer splits on spaces and punctuation, so a run of Chinese with no
spaces becomes one giant token that no query ever matches. This index stores every chunk with
each CJK run rewritten as its overlapping character bigrams (``检索结果`` → ``检索 索结 结果``), the
usual segmenter-free approach (as in Lucene's CJKAnalyzer), and the rest of the text as is.
Queries that contain CJK characters use it; other queries keep the original index, so English
BM25 scores are exactly what they were.

The index holds only the chunks whose bigram form differs from their text (CJK, or text
that NFKC changes: ``chunks_cjk_grams``, its external content); a chunk without CJK (nearly
every English chunk) is indexed once, by the word index, whose tokens of it are the same.
FTS5's own ``bm25()`` over this index would then read the wrong row count, average length and
document frequencies, so a CJK query is scored by ``store/cjk_bm25.py`` with FTS5's formula
and the statistics of an index of every chunk, exactly as before: the same scores, bit for
bit. Deleting from an external-content index takes the exact text that was indexed; the
triggers read it from what is stored, never by running ``cjk_grams`` again, so a later change
to ``cjk_grams`` or to Python's Unicode tables cannot unbalance the index. Files from before
(schema 5 and older: every chunk in the index) are converted when opened (``install``).
"""

from __future__ import annotations

import logging
import re
import sqlite3
import unicodedata
from collections.abc import Callable

from citewise.store.text import MAX_TERMS, WORD

__all__ = [
    "CJK_SCHEMA",
    "CJK_STATEMENTS",
    "GRAMS_FUNCTION",
    "cjk_grams",
    "cjk_phrases",
    "cjk_query",
    "has_cjk",
    "install",
]

log = logging.getLogger(__name__)

GRAMS_FUNCTION = "citewise_cjk_grams"

# The bigram form of a new chunk, stored (and indexed) only where it is not the text itself:
# writing every chunk's text into this index too was a quarter of a build's store time
# (benchmarks/peers.md).
_ADD = (
    "INSERT INTO chunks_cjk_grams (rid, grams) SELECT new.rid, g FROM "
    f"(SELECT {GRAMS_FUNCTION}(new.text) AS g) WHERE g IS NOT new.text;\n"
    "    INSERT INTO chunks_cjk (rowid, grams) "
    "SELECT rid, grams FROM chunks_cjk_grams WHERE rid = new.rid;"
)
_REMOVE = (
    "INSERT INTO chunks_cjk (chunks_cjk, rowid, grams) "
    "SELECT 'delete', rid, grams FROM chunks_cjk_grams WHERE rid = old.rid;\n"
    "    DELETE FROM chunks_cjk_grams WHERE rid = old.rid;"
)
TRIGGERS = ("chunks_cjk_ai", "chunks_cjk_ad", "chunks_cjk_au")
# Triggers call cjk_grams() (registered on every connection the store opens) so, as for the
# main index, no code path can change a chunk and leave its bigram entry behind.
CJK_STATEMENTS = (
    "CREATE TABLE IF NOT EXISTS chunks_cjk_grams (rid INTEGER PRIMARY KEY, grams TEXT NOT NULL)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_cjk USING fts5(grams, "
    "content='chunks_cjk_grams', content_rowid='rid', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    f"""CREATE TRIGGER IF NOT EXISTS chunks_cjk_ai AFTER INSERT ON chunks BEGIN
    {_ADD}
END""",
    f"""CREATE TRIGGER IF NOT EXISTS chunks_cjk_ad AFTER DELETE ON chunks BEGIN
    {_REMOVE}
END""",
    f"""CREATE TRIGGER IF NOT EXISTS chunks_cjk_au AFTER UPDATE OF text ON chunks
WHEN old.text IS NOT new.text BEGIN
    {_REMOVE}
    {_ADD}
END""",
)
CJK_SCHEMA = ";\n".join(CJK_STATEMENTS) + ";\n"

# Han (with extensions and compatibility ideographs), kana and Hangul syllables. CJK
# punctuation (U+3000-303F, full-width forms) is deliberately outside: it separates runs.
_CJK = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\U00020000-\U0002a6df\U0002a700-\U0002ebef\U00030000-\U0003134f"
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


# Every CJK character is at U+3040 or above, so its UTF-8 form starts with a byte of 0xE3 or
# more; deleting every smaller byte leaves nothing from a text without one. A C-speed check,
# where scanning the text with _CJK_CHAR took most of a build's bigram-index time.
_BELOW_WIDE_LEAD = bytes(range(0xE3))


def _may_have_cjk(text: str) -> bool:
    return bool(text.encode("utf-8", "surrogatepass").translate(None, _BELOW_WIDE_LEAD))


def cjk_grams(text: str | None) -> str:
    """``text`` with every CJK run replaced by its space-separated overlapping bigrams."""
    if not text:
        return ""
    if text.isascii():  # its own NFKC form, with no CJK: most chunks
        return text
    if unicodedata.is_normalized("NFKC", text) and not _may_have_cjk(text):
        return text
    normal = unicodedata.normalize("NFKC", text)
    return _CJK_RUN.sub(lambda m: f" {' '.join(_bigrams(m.group()))} ", normal)


def cjk_query(text: str, stopwords: frozenset[str]) -> str:
    """A safe FTS5 MATCH expression over the bigram index: quoted terms joined by OR."""
    return " OR ".join(cjk_phrases(text, stopwords))


def cjk_phrases(text: str, stopwords: frozenset[str]) -> list[str]:
    """The quoted terms of ``text``'s query over the bigram index, in order, each once.

    Non-CJK words are filtered as for the main index. A lone CJK character cannot match a
    bigram as a term, so it becomes a prefix query (``"字"*``) matching the bigrams it starts.
    """
    terms: list[str] = []
    for token in WORD.findall(cjk_grams(text).lower()):
        if has_cjk(token):
            terms.append(f'"{token}"' + ("*" if len(token) == 1 else ""))
        elif token not in stopwords:
            terms.append(f'"{token}"')
    return list(dict.fromkeys(terms))[:MAX_TERMS]


def install(conn: sqlite3.Connection, on_upgrade: Callable[[sqlite3.Connection], None]) -> None:
    """Register the bigram function on ``conn``; (re)build the index if the file predates it.

    A file with no bigram index (schema 1), one holding a copy of every text (schema 2 to 4)
    or one holding every chunk (schema 5) gets this one, filled from the chunks (nothing
    else changes: the index is made from them alone, and ``cjk_bm25`` scores it as the
    index of every chunk, so the scores are the same). ``on_upgrade`` runs inside the
    upgrade transaction (the store records its schema version).
    """
    conn.create_function(GRAMS_FUNCTION, 1, cjk_grams, deterministic=True)
    if _is_current(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _is_current(conn):  # another process may have upgraded it meanwhile
            count = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            log.warning("rebuilding the CJK bigram index of an older file (%d chunks)", count)
            # Statement by statement: executescript() would commit the open transaction.
            for trigger in TRIGGERS:
                conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
            conn.execute("DROP TABLE IF EXISTS chunks_cjk")
            conn.execute("DROP VIEW IF EXISTS chunks_cjk_source")
            for statement in CJK_STATEMENTS:
                conn.execute(statement)
            conn.execute("DELETE FROM chunks_cjk_grams")
            conn.execute(
                "INSERT INTO chunks_cjk_grams (rid, grams) SELECT rid, g FROM "
                f"(SELECT rid, text, {GRAMS_FUNCTION}(text) AS g FROM chunks) "
                "WHERE g IS NOT text"
            )
            conn.execute("INSERT INTO chunks_cjk (chunks_cjk) VALUES ('rebuild')")
            on_upgrade(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _is_current(conn: sqlite3.Connection) -> bool:
    """The file has this index: the stored forms, no copy of every text (schema 2 to 4), no
    view of every chunk (schema 5)."""
    names = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE name IN "
            "('chunks_cjk', 'chunks_cjk_grams', 'chunks_cjk_content', 'chunks_cjk_source')"
        )
    }
    return names == {"chunks_cjk", "chunks_cjk_grams"}
