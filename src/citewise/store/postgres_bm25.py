"""BM25's top k on PostgreSQL without scoring every posting of a frequent term.

``postgres_terms.BM25_SQL`` scores every posting of every query term: fine for rare terms,
slow for frequent ones (a word in a third of 1M chunks is 300k postings per query). This is
the threshold algorithm over postings read best first, and it returns the same chunks with
the same scores:

- ``term_stats`` holds each term's document frequency (kept by triggers on ``postings``, so
  any writer keeps it current), so the idf needs no count over the postings;
- the ``postings_impact`` index orders each term's postings by :data:`IMPACT`, BM25's term
  weight at a fixed mean length (:data:`REF_AVGDL`), so a query reads a prefix of each list;
- every chunk seen in a prefix is scored exactly (its other terms are looked up by key), and
  a chunk in no prefix scores at most the sum of each list's bound for its unread postings
  (:func:`rest_bound`). Once that sum is below the k-th exact score the top k is final;
  until then the prefixes grow. A list read to its end bounds nothing. A round that would
  cost more than scoring every posting (frequent terms only, whose top k needs deep reads)
  gives way to that (the caller runs ``postgres_terms.BM25_SQL``), and so does a query whose
  lists are all short enough to read whole.

Queries with prefix phrases (a lone CJK character) or identifiers keep the full scoring.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import psycopg

from citewise.store.postgres_terms import BOTH, K1, B

__all__ = ["IMPACT", "REF_AVGDL", "rest_bound", "top_k"]

# The impact expression, written identically in the index (migration 4) and the queries (an
# expression index matches only the same text): tf / (tf + k1(1 - b) + k1 b dl / REF_AVGDL).
REF_AVGDL = 100.0
_C = K1 * (1 - B)
_KR = K1 * B / REF_AVGDL
IMPACT = "(tf::float8 / (tf::float8 + 0.3 + 0.009 * dl::float8))"
# A list this short is read whole at once; a longer one from FIRST postings, growing GROWTH×.
WHOLE = 2048
FIRST = 256
GROWTH = 4
# A candidate's lookup in a list read in part costs about this many postings read in order
# (measured at 100k windows): a round whose reads and lookups would cost more than scoring
# every posting gives way to that (top_k returns None).
LOOKUP = 4
# Relative slack on the bounds: float rounding must never make one fall below a true score.
_SLACK = 1e-9


def idf(n: float, df: float) -> float:
    """FTS5's idf (floored at 1e-6)."""
    value = math.log((n - df + 0.5) / (df + 0.5))
    return 1e-6 if value <= 0 else value


def rest_bound(x: float, avgdl: float) -> float:
    """The highest BM25 term weight (without idf) of a posting whose :data:`IMPACT` is at
    most ``x``, at mean length ``avgdl``.

    With C = k1(1-b), weight = (k1+1) tf / (tf + C + K dl) for K = k1 b / avgdl and impact =
    tf / (tf + C + Kr dl). impact <= x means C + Kr dl >= tf (1-x)/x; with ρ = K / Kr,
    C + K dl >= min(1, ρ)(C + Kr dl) >= min(1, ρ) tf (1-x)/x, so weight <= (k1+1) /
    (1 + min(1, ρ)(1-x)/x).
    """
    if x <= 0:
        return 0.0
    rho = min(1.0, (K1 * B / max(avgdl, 1e-12)) / _KR)
    return (K1 + 1) / (1 + rho * (1 - x) / x) * (1 + _SLACK)


# One round of the threshold algorithm: each phrase's list read best first up to its limit
# (the main or CJK index and BOTH are separate lists: each in its own index range), every chunk
# seen scored exactly, the top k kept; and per list how many postings were read and the
# impact of the last.
_ROUND = f"""
WITH q AS (
    SELECT term, n, w, partial, i
    FROM unnest(%(terms)s::text[], %(n)s::int[], %(idf)s::float8[], %(partial)s::bool[])
        WITH ORDINALITY AS q(term, n, w, partial, i)
), seen AS MATERIALIZED (
    SELECT q.i, p.sub, p.rid, p.imp, p.tf, p.dl FROM q CROSS JOIN LATERAL (
        (SELECT 0 AS sub, rid, {IMPACT} AS imp, tf, dl FROM postings
         WHERE kb_id = %(kb)s AND idx = %(idx)s AND term = q.term
         ORDER BY {IMPACT} DESC LIMIT q.n)
        UNION ALL
        (SELECT 1, rid, {IMPACT}, tf, dl FROM postings
         WHERE kb_id = %(kb)s AND idx = {BOTH} AND term = q.term
         ORDER BY {IMPACT} DESC LIMIT q.n)) p
), cand AS MATERIALIZED (
    SELECT DISTINCT s.rid FROM seen s {{join}}
), hits AS (
    -- A list read whole holds every posting of its term: its part of each score is here.
    SELECT s.i, s.rid, s.tf::float8 AS tf, s.dl::float8 AS dl FROM seen s JOIN q ON q.i = s.i
    WHERE NOT q.partial AND s.rid IN (SELECT rid FROM cand)
    UNION ALL
    -- A list read in part: each candidate's posting looked up by its primary key.
    SELECT q.i, cand.rid, h.tf::float8, h.dl::float8
    FROM q CROSS JOIN cand CROSS JOIN LATERAL (
        (SELECT tf, dl FROM postings
         WHERE kb_id = %(kb)s AND idx = %(idx)s AND term = q.term AND rid = cand.rid)
        UNION ALL
        (SELECT tf, dl FROM postings
         WHERE kb_id = %(kb)s AND idx = {BOTH} AND term = q.term AND rid = cand.rid)) h
    WHERE q.partial
), scored AS (
    -- Summed in phrase order: chunks with the same terms tie exactly (then rid decides).
    SELECT h.rid, sum(q.w * h.tf * ({K1} + 1)
        / (h.tf + {K1} * (1 - {B} + {B} * h.dl / %(avgdl)s::float8)) ORDER BY q.i) AS score
    FROM hits h JOIN q ON q.i = h.i
    GROUP BY h.rid
)
SELECT 0, NULL::bigint, rid, score FROM (
    SELECT rid, score FROM scored ORDER BY score DESC, rid LIMIT %(k)s) t
UNION ALL
SELECT 1, (i - 1) * 2 + sub, count(*), min(imp) FROM seen GROUP BY i, sub
"""


def round_sql(where: str) -> str:
    """One round's statement; ``where`` filters the chunks that may be returned ("true")."""
    join = "" if where == "true" else f"JOIN chunks c ON c.rid = s.rid WHERE {where}"
    return _ROUND.format(join=join)


def top_k(
    conn: psycopg.Connection[Any],
    info: dict[str, Any],
    index: int,
    terms: Sequence[str],
    k: int,
    where: str,
    filter_params: dict[str, Any],
) -> list[tuple[int, float]] | None:
    """The top ``k`` (rid, score) for exact ``terms`` (one per phrase, repeats counted) of
    ``index``; ``info`` is the knowledge base's row, read in the caller's snapshot. None:
    reading best first would cost more than scoring every posting (the caller does that)."""
    n = float(info["n_chunks"])
    avgdl = float(info["tokens"][index]) / max(n, 1.0)
    rows = conn.execute(
        "SELECT term, sum(df) FROM term_stats WHERE kb_id = %s AND idx IN (%s, %s) "
        "AND term = ANY(%s) GROUP BY term",
        (info["kb_id"], index, BOTH, list(set(terms))),
    ).fetchall()
    df = {str(t): int(d) for t, d in rows if d}
    phrases = [t for t in terms if t in df]
    if not phrases:
        return []
    weights = [idf(n, df[t]) for t in phrases]
    limits = [df[t] if df[t] <= WHOLE else FIRST for t in phrases]
    everything = sum(df[t] for t in phrases)
    while True:
        partial = [limit < df[t] for t, limit in zip(phrases, limits, strict=True)]
        # Every list read whole is full scoring's work in more statements: leave it to that.
        if not any(partial) or sum(limits) * (1 + LOOKUP * sum(partial)) > everything:
            return None
        params = filter_params | {
            "terms": phrases, "n": limits, "idf": weights, "kb": info["kb_id"],
            "partial": partial,
            "idx": index, "avgdl": avgdl, "k": k,
        }  # fmt: skip
        top: list[tuple[int, float]] = []
        last: dict[int, float] = {}
        for kind, key, value, score in conn.execute(round_sql(where).encode(), params).fetchall():
            if kind == 0:
                top.append((int(value), float(score)))
            elif int(value) >= limits[key // 2] < df[phrases[key // 2]]:
                # A list that filled its limit may hold more, none above its last impact.
                last[key // 2] = max(last.get(key // 2, 0.0), float(score))
        if not last:
            return top  # every list read whole: every chunk with a query term was scored
        threshold = top[-1][1] if len(top) >= k else 0.0
        rest = sum(weights[i] * rest_bound(x, avgdl) for i, x in last.items())
        if rest < threshold:
            return top
        limits = [
            min(df[t], limit * GROWTH) if i in last else limit
            for i, (t, limit) in enumerate(zip(phrases, limits, strict=True))
        ]
