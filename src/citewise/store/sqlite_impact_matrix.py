"""The impact matrix itself: FTS5's postings read from its index, each with its BM25 term.

``build`` reads ``chunks_fts``'s own index (its ``fts5vocab`` instance table) and scores every
(term, chunk) posting with FTS5's formula; ``ImpactIndex.top`` answers an OR of single-token
terms from it. Saving, loading and the background builds are ``sqlite_impact``'s.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["B", "IDF_FLOOR", "K1", "ImpactIndex", "build", "term_scores"]

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # fts5_aux.c: "if( idf<=0.0 ) idf = 1e-6;"


@dataclass(frozen=True)
class ImpactIndex:
    """One generation's postings: row ``terms[t]`` spans ``indptr[t]:indptr[t + 1]``."""

    generation: str
    terms: dict[str, int]
    indptr: npt.NDArray[np.int64]
    positions: npt.NDArray[np.int32]  # into ``rids``
    impacts: npt.NDArray[np.float64]
    rids: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.float64]  # each chunk's token count, by position in ``rids``

    def postings(
        self, term: str
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The chunks holding ``term`` (a token), ascending: rowids, impacts, lengths."""
        row = self.terms.get(term)
        if row is None:
            return np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
        lo, hi = int(self.indptr[row]), int(self.indptr[row + 1])
        at = self.positions[lo:hi]
        return self.rids[at], np.asarray(self.impacts[lo:hi]), self.lengths[at]

    def top(self, terms: list[str], k: int) -> list[tuple[int, float]]:
        """The ``k`` best (rid, score) for an OR of single-token terms; ties by rid."""
        rows = [self.terms[t] for t in terms if t in self.terms]
        if not rows or k <= 0:
            return []
        # Python ints for the bounds: a numpy scalar per slice bound costs more than the slice.
        spans = [(int(self.indptr[r]), int(self.indptr[r + 1])) for r in rows]
        cand, scores = self._sums(spans)
        if len(cand) > k:
            # Keep every chunk tied with the k-th score, so the rid tie-break below is exact.
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            keep = scores >= kth
            cand, scores = cand[keep], scores[keep]
        rids = self.rids[cand]
        order = np.lexsort((rids, -scores))[:k]
        return list(zip(rids[order].tolist(), scores[order].tolist(), strict=True))

    def _sums(
        self, spans: list[tuple[int, int]]
    ) -> tuple[npt.NDArray[np.integer[Any]], npt.NDArray[Any]]:
        """Each matching chunk's position in ``rids`` and its summed score."""
        if len(spans) == 1:
            ((lo, hi),) = spans
            return self.positions[lo:hi], self.impacts[lo:hi]
        pos = np.concatenate([self.positions[lo:hi] for lo, hi in spans])
        val = np.concatenate([self.impacts[lo:hi] for lo, hi in spans])
        # bincount adds each chunk's postings in query order, from 0.0, as FTS5 adds its
        # phrases' scores: the sums are FTS5's bit for bit, not just to rounding.
        if len(pos) * 8 >= len(self.rids):  # dense enough: one pass over all chunks
            dense = np.bincount(pos, weights=val, minlength=len(self.rids))
            cand = np.flatnonzero(dense)
            return cand, dense[cand]
        cand, inverse = np.unique(pos, return_inverse=True)
        return cand, np.bincount(inverse, weights=val, minlength=len(cand))


def term_scores(
    idf: float | npt.NDArray[np.float64],
    tf: npt.NDArray[np.float64],
    length: npt.NDArray[Any],
    avgdl: float,
) -> npt.NDArray[np.float64]:
    """One term's BM25 score in each chunk that has it ``tf`` times: fts5Bm25Function's
    expression in its order, so each float is FTS5's bit for bit."""
    result: npt.NDArray[np.float64] = idf * (
        (tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * length / avgdl))
    )
    return result


def build(conn: sqlite3.Connection, generation: str) -> ImpactIndex:
    """The impact matrix of ``chunks_fts`` as this connection sees it."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.citewise_fts_instance "
        "USING fts5vocab(main, chunks_fts, instance)"
    )
    # One row per token occurrence, ordered by term then chunk: each run of equal rows is one
    # posting, counted batch by batch, so memory follows the postings, never the occurrences
    # (the whole list of occurrences was the peak of a build: benchmarks/peers.md).
    cur = conn.execute("SELECT term, doc FROM temp.citewise_fts_instance")
    term_ids: dict[str, int] = {}
    t_parts: list[npt.NDArray[np.int32]] = []
    d_parts: list[npt.NDArray[np.int64]] = []
    f_parts: list[npt.NDArray[np.int64]] = []
    while batch := cur.fetchmany(_BATCH):
        t = np.fromiter(
            (term_ids.setdefault(t, len(term_ids)) for t, _ in batch),
            dtype=np.int32,
            count=len(batch),
        )
        d = np.fromiter((d for _, d in batch), dtype=np.int64, count=len(batch))
        del batch
        starts = np.ones(len(t), dtype=bool)
        starts[1:] = (t[1:] != t[:-1]) | (d[1:] != d[:-1])
        at = np.flatnonzero(starts)
        counts = np.diff(np.append(at, len(t)))
        t, d = t[at], d[at]
        if f_parts and t_parts[-1][-1] == t[0] and d_parts[-1][-1] == d[0]:
            f_parts[-1][-1] += counts[0]  # a run the batch boundary cut in two
            t, d, counts = t[1:], d[1:], counts[1:]
        if len(t):  # empty when the whole batch continued the previous run
            t_parts.append(t)
            d_parts.append(d)
            f_parts.append(counts)
    if not t_parts:
        empty = np.zeros(0, dtype=np.int64)
        return ImpactIndex(
            generation, {}, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0), empty,
            np.zeros(0),
        )  # fmt: skip
    # The chunks, sorted (np.unique of every posting's chunk, from the parts' few).
    rids = np.unique(np.concatenate([np.unique(part) for part in d_parts]))
    # One list joined at a time, each freed as it is: never all the parts and all the
    # joined arrays at once.
    term_of = np.concatenate(t_parts)
    t_parts.clear()
    doc_of = np.concatenate(d_parts)
    d_parts.clear()
    freq_of = np.concatenate(f_parts)
    f_parts.clear()
    p_term, p_doc, freq = _postings(term_of, doc_of, freq_of)
    del term_of, doc_of, freq_of
    # Each posting's chunk as its position in ``rids`` (what np.unique's inverse gives),
    # found in slices instead of one sort of every posting.
    p_pos = np.empty(len(p_doc), dtype=np.int32)
    for lo in range(0, len(p_doc), _BATCH):
        p_pos[lo : lo + _BATCH] = np.searchsorted(rids, p_doc[lo : lo + _BATCH])
    del p_doc
    # A chunk's length: its token occurrences, all of them in its postings' counts.
    lengths = np.bincount(p_pos, weights=freq, minlength=len(rids))
    n_rows = _row_count(conn, len(rids))
    avgdl = float(lengths.sum()) / n_rows
    df = np.bincount(p_term, minlength=len(term_ids)).astype(np.float64)
    # The C library's log, as FTS5's (numpy's vectorised log may differ in the last bit).
    ratio = (n_rows - df + 0.5) / (df + 0.5)
    idf = np.fromiter((math.log(r) if r > 0 else 0.0 for r in ratio), np.float64, len(ratio))
    idf[idf <= 0.0] = IDF_FLOOR
    impacts = np.empty(len(p_term), dtype=np.float64)
    # In slices, so the temporaries stay small (each element is computed exactly as in one
    # pass).
    for lo in range(0, len(p_term), _BATCH):
        hi = lo + _BATCH
        tf = freq[lo:hi].astype(np.float64)
        impacts[lo:hi] = term_scores(idf[p_term[lo:hi]], tf, lengths[p_pos[lo:hi]], avgdl)
    indptr = np.zeros(len(term_ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(p_term, minlength=len(term_ids)), out=indptr[1:])
    # Kept: CJK queries read a chunk's length here (store/cjk_bm25.py).
    kept = np.asarray(lengths, dtype=np.float64)
    return ImpactIndex(generation, term_ids, indptr, p_pos, impacts, rids, kept)


_BATCH = 1 << 14


def _postings(
    term: npt.NDArray[np.int32], doc: npt.NDArray[np.int64], freq: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The postings ordered by (term, chunk), each (term, chunk) once with its count. FTS5
    gives them in that order (terms in order get increasing ids), so this only checks; were
    the order ever different, equal pairs are merged and summed here."""
    ordered = (term[1:] > term[:-1]) | ((term[1:] == term[:-1]) & (doc[1:] > doc[:-1]))
    if bool(ordered.all()):
        return term, doc, freq
    order = np.lexsort((doc, term))
    term, doc, freq = term[order], doc[order], freq[order]
    starts = np.ones(len(term), dtype=bool)
    starts[1:] = (term[1:] != term[:-1]) | (doc[1:] != doc[:-1])
    at = np.flatnonzero(starts)
    return term[at], doc[at], np.add.reduceat(freq, at)


def _row_count(conn: sqlite3.Connection, seen: int) -> int:
    """FTS5's N: the rows of its docsize table (a chunk with no tokens counts, too)."""
    row = conn.execute("SELECT count(*) FROM chunks_fts_docsize").fetchone()
    return int(row[0]) if row else seen
