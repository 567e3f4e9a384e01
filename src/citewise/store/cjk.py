"""BM25 for Chinese, Japanese and Korean text: a second FTS5 index over character bigrams.

FTS5's ``unicode61`` tokenizer splits on spaces and punctuation, so a run of Chinese with no
spaces becomes one giant token that no query ever matches. This index stores every chunk with
each CJK run rewritten as its overlapping character bigrams (``检索结果`` → ``检索 索结 结果``), the
usual segmenter-free approach (as in Lucene's CJKAnalyzer), and the rest of the text as is.
Queries that contain CJK characters use it; other queries keep the original index, so English
BM25 scores are exactly what they were.
"""

from __future__ import annotations

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
    "cjk_query",
    "has_cjk",
    "install",
]

GRAMS_FUNCTION = "citewise_cjk_grams"

# Triggers call cjk_grams() (registered on every connection the store opens) so, as for the
# main index, no code path can change a chunk and leave its bigram entry behind.
CJK_STATEMENTS = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_cjk USING fts5("
    "grams, tokenize='porter unicode61 remove_diacritics 2')",
    f"""CREATE TRIGGER IF NOT EXISTS chunks_cjk_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_cjk (rowid, grams) VALUES (new.rid, {GRAMS_FUNCTION}(new.text));
END""",
    """CREATE TRIGGER IF NOT EXISTS chunks_cjk_ad AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_cjk WHERE rowid = old.rid;
END""",
    f"""CREATE TRIGGER IF NOT EXISTS chunks_cjk_au AFTER UPDATE OF text ON chunks
WHEN old.text IS NOT new.text BEGIN
    UPDATE chunks_cjk SET grams = {GRAMS_FUNCTION}(new.text) WHERE rowid = new.rid;
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


def cjk_grams(text: str | None) -> str:
    """``text`` with every CJK run replaced by its space-separated overlapping bigrams."""
    if not text:
        return ""
    if text.isascii():  # its own NFKC form, with no CJK: most chunks
        return text
    normal = unicodedata.normalize("NFKC", text)
    return _CJK_RUN.sub(lambda m: f" {' '.join(_bigrams(m.group()))} ", normal)


def cjk_query(text: str, stopwords: frozenset[str]) -> str:
    """A safe FTS5 MATCH expression over the bigram index: quoted terms joined by OR.

    Non-CJK words are filtered as for the main index. A lone CJK character cannot match a
    bigram as a term, so it becomes a prefix query (``"字"*``) matching the bigrams it starts.
    """
    terms: list[str] = []
    for token in WORD.findall(cjk_grams(text).lower()):
        if has_cjk(token):
            terms.append(f'"{token}"' + ("*" if len(token) == 1 else ""))
        elif token not in stopwords:
            terms.append(f'"{token}"')
    return " OR ".join(list(dict.fromkeys(terms))[:MAX_TERMS])


def install(conn: sqlite3.Connection, on_upgrade: Callable[[sqlite3.Connection], None]) -> None:
    """Register the bigram function on ``conn``; add and fill the index if the file predates it.

    ``on_upgrade`` runs inside the upgrade transaction (the store records its schema version).
    """
    conn.create_function(GRAMS_FUNCTION, 1, cjk_grams, deterministic=True)
    if _has_index(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _has_index(conn):  # another process may have upgraded it meanwhile
            # Statement by statement: executescript() would commit the open transaction.
            for statement in CJK_STATEMENTS:
                conn.execute(statement)
            conn.execute(
                f"INSERT INTO chunks_cjk (rowid, grams) SELECT rid, {GRAMS_FUNCTION}(text) "
                "FROM chunks"
            )
            on_upgrade(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _has_index(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunks_cjk'"
    ).fetchone()
    return row is not None
