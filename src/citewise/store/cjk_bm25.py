"""FTS5's BM25 of a CJK query over every chunk, from a bigram index of only the chunks needing one.

``chunks_cjk`` holds only the chunks whose bigram form differs from their text
(``store/cjk.py``); every other chunk's bigram form is its text, which ``chunks_fts`` indexes
with the same tokenizer, so its tokens there are the ones it would have in a bigram index of
every chunk. FTS5's ``bm25()`` over ``chunks_cjk`` would read that small index's own row
count, total length and document frequencies; citewise's scores are those of an index of every
chunk's bigram form (what schema 5 and older kept), computed here with ``fts5Bm25Function``'s
formula, in its order, from FTS5's own counts:

- N and the total length: ``chunks_fts``'s (every chunk), less the words-index lengths of the
  bigram-indexed chunks, plus their lengths in ``chunks_cjk`` (the indexes' size records);
- a phrase's document frequency: its matches in ``chunks_cjk``, plus its matches in
  ``chunks_fts`` among the other chunks (FTS5 matches each phrase: tokens, stems, prefixes
  and phrases are its own, never re-derived);
- a chunk's frequency of a phrase: read off FTS5's ``bm25()`` of that phrase alone over the
  index holding the chunk's bigram form. Given that index's statistics and the chunk's
  length, the score is a strictly increasing function of the (integer) frequency, so the
  frequency is recovered exactly, and checked by recomputing the score bit for bit.

A chunk then scores the sum of its phrases' terms in query order, from 0.0, as FTS5 adds
them: the scores equal those of the index of every chunk bit for bit (tests/store/test_cjk.py,
and SciFact with CJK documents in benchmarks/peers.md).
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from citewise.store.cjk import has_cjk
from citewise.store.sqlite_impact import tokens
from citewise.store.sqlite_impact_matrix import IDF_FLOOR, K1, B, ImpactIndex, term_scores
from citewise.store.sqlite_schema import text_generation

__all__ = ["cjk_scores"]

log = logging.getLogger(__name__)

_Ints = npt.NDArray[np.int64]
_Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class _Grams:
    """The bigram-indexed chunks of one text generation and their words-index length."""

    rids: _Ints  # sorted
    words_length: int


# Per text generation (random 62-bit starts: no two knowledge bases share one): reading the
# bigram-indexed chunks' sizes is the one part that grows with them.
_GRAMS: dict[str, _Grams] = {}
_GRAMS_MAX = 16
_lock = threading.Lock()


def _varint(blob: bytes, at: int = 0) -> tuple[int, int]:
    """SQLite's varint at ``at`` (FTS5's size records), and where the next one starts."""
    value = 0
    for i in range(8):
        byte = blob[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | blob[at + 8], at + 9


def _size(blob: bytes) -> int:
    """A one-column table's docsize record: the row's token count."""
    return blob[0] if blob[0] < 0x80 else _varint(blob)[0]


def _sizes(records: tuple[bytes, ...]) -> _Floats:
    """Each docsize record's token count, decoded together (a varint of 1 to 4 bytes is a
    count under 2**28, every row's; a longer one is decoded alone)."""
    width = np.fromiter(map(len, records), np.int64, len(records))
    if width.max() > 4:
        return np.array([_size(record) for record in records], dtype=np.float64)
    data = np.frombuffer(b"".join(records), dtype=np.uint8).astype(np.int64)
    start = np.concatenate(([0], np.cumsum(width)[:-1]))
    value = np.zeros(len(records), dtype=np.int64)
    for byte in range(4):  # big-endian groups of 7 bits, as _varint reads them
        more = width > byte
        value[more] = (value[more] << 7) | (data[start[more] + byte] & 0x7F)
    return value.astype(np.float64)


def _totals(conn: sqlite3.Connection, table: str) -> tuple[int, int]:
    """FTS5's row count and total token count of ``table``: its averages record (what
    ``bm25()`` reads through xRowCount and xColumnTotalSize)."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    rows, at = _varint(row[0])
    return rows, _varint(row[0], at)[0]


def _grams(conn: sqlite3.Connection) -> _Grams:
    generation = text_generation(conn)
    cached = _GRAMS.get(generation)
    if cached is not None:
        return cached
    found = conn.execute(
        "SELECT g.rid, d.sz FROM chunks_cjk_grams g "
        "JOIN chunks_fts_docsize d ON d.id = g.rid ORDER BY g.rid"
    ).fetchall()
    grams = _Grams(
        np.fromiter((rid for rid, _ in found), np.int64, len(found)),
        sum(_size(sz) for _, sz in found),
    )
    with _lock:
        if len(_GRAMS) >= _GRAMS_MAX:
            _GRAMS.clear()
        _GRAMS[generation] = grams
    return grams


def _idf(rows: int, hits: int) -> float:
    # fts5Bm25GetData; the C library's log, as FTS5's.
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else IDF_FLOOR


@dataclass(frozen=True)
class _Matches:
    rids: _Ints
    freq: _Floats
    length: _Floats


def _matches(conn: sqlite3.Connection, table: str, phrase: str, rows: int, total: int) -> _Matches:
    """The chunks of ``table`` matching ``phrase``: each one's frequency of it and length."""
    found = conn.execute(
        f"SELECT {table}.rowid, -bm25({table}), d.sz FROM {table} "
        f"JOIN {table}_docsize d ON d.id = {table}.rowid WHERE {table} MATCH ?",
        (phrase,),
    ).fetchall()
    n = len(found)
    if not n:
        return _Matches(np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    rid_col, score_col, size_col = zip(*found, strict=True)
    rids = np.array(rid_col, dtype=np.int64)
    score = np.array(score_col, dtype=np.float64)
    length = _sizes(size_col)
    freq, exact = _frequencies(score, length, _idf(rows, n), total / rows)
    if not exact:  # never seen: FTS5's score is this expression of an integer
        log.warning("a CJK phrase frequency did not reproduce FTS5's score (%s)", table)
    return _Matches(rids, freq, length)


def _indexed_matches(index: ImpactIndex, phrase: str, rows: int, total: int) -> _Matches | None:
    """``_matches`` of ``chunks_fts`` from its impact matrix (the same generation), without a
    statement: each posting's impact is FTS5's score of that one term, so the frequency is
    recovered as from ``bm25()``. None: ask FTS5 (a phrase of other than one token, or a
    score that does not come back exactly)."""
    if not (phrase.startswith('"') and phrase.endswith('"')):
        return None
    split = tokens([phrase[1:-1]])[0]
    if len(split) != 1:
        return None
    rids, score, length = index.postings(split[0])
    if not len(rids):
        return _Matches(rids, score, length)
    freq, exact = _frequencies(score, length, _idf(rows, len(rids)), total / rows)
    return _Matches(rids, freq, length) if exact else None


def _frequencies(score: _Floats, length: _Floats, idf: float, avgdl: float) -> tuple[_Floats, bool]:
    """Each chunk's frequency of a phrase from FTS5's score of it alone, and whether those
    frequencies give the scores back exactly."""
    norm = K1 * (1 - B + B * length / avgdl)
    # score = idf * f(k1 + 1) / (f + norm), solved for f, an integer.
    ratio = score / idf
    freq: _Floats = np.rint(ratio * norm / (K1 + 1.0 - ratio))
    return freq, bool(np.array_equal(term_scores(idf, freq, length, avgdl), score))


def cjk_scores(
    conn: sqlite3.Connection, phrases: list[str], index: ImpactIndex | None = None
) -> tuple[_Ints, _Floats]:
    """Every chunk matching any of ``phrases`` (FTS5 phrase expressions, OR'ed), sorted by
    rowid, and its score: ``-bm25()`` of the OR query over a bigram index of every chunk.
    ``index``: ``chunks_fts``'s impact matrix of this text generation, if built."""
    rows, words_total = _totals(conn, "chunks_fts")
    if not rows or not phrases:
        return np.zeros(0, np.int64), np.zeros(0)
    grams_rows, grams_total = _totals(conn, "chunks_cjk")
    grams = _grams(conn)
    avgdl = (words_total - grams.words_length + grams_total) / rows
    per_phrase: list[tuple[_Ints, _Floats, _Floats, float]] = []
    for phrase in phrases:
        bigram = _matches(conn, "chunks_cjk", phrase, grams_rows, grams_total)
        if has_cjk(phrase):
            # Only text with CJK holds a CJK token, and all of it is in the bigram index.
            rids, freq, length = bigram.rids, bigram.freq, bigram.length
        else:
            words = _indexed_matches(index, phrase, rows, words_total) if index else None
            if words is None:
                words = _matches(conn, "chunks_fts", phrase, rows, words_total)
            # A bigram-indexed chunk counts by its bigram form only.
            other = ~np.isin(words.rids, grams.rids)
            rids = np.concatenate([bigram.rids, words.rids[other]])
            freq = np.concatenate([bigram.freq, words.freq[other]])
            length = np.concatenate([bigram.length, words.length[other]])
        per_phrase.append((rids, freq, length, _idf(rows, len(rids))))
    every = np.unique(np.concatenate([rids for rids, _, _, _ in per_phrase]))
    score = np.zeros(len(every))
    for rids, freq, length, idf in per_phrase:
        # fts5Bm25Function's expression, added phrase by phrase in query order from 0.0
        # (a phrase a chunk lacks adds 0.0 there, which changes no sum).
        at = np.searchsorted(every, rids)
        score[at] += term_scores(idf, freq, length, avgdl)
    return every, score
