"""BM25's top k on PostgreSQL without scoring every posting of a frequent term.

``postgres_terms.BM25_SQL`` scores every posting of every query term: fine for rare terms,
slow for frequent ones (a word in a third of 1M chunks is 300k postings per query). This is
the threshold algorithm over postings read best first, and it returns the same chunks with
the same scores:

- ``term_stats`` holds each term's document frequency (kept by triggers on ``postings``, so
  any writer keeps it current), so the idf needs no count over the postings;
- the ``postings_best`` index orders each term's postings by :data:`IMPACT`, BM25's term
  weight at a fixed mean length (:data:`REF_AVGDL`), so a query reads a prefix of each list
  (from the index alone: it carries tf and dl, as the primary key does);
- a chunk in no prefix scores at most the sum of each list's bound for its unread postings
  (:func:`rest_bound`). A chunk seen in some prefixes is known to score at least its seen
  postings' sum, and at most that plus the other lists' bounds: only the chunks that may
  reach the k-th best known score are scored exactly, their missing postings looked up per
  list in one index scan. Once the bound of the unseen is below the k-th exact score the top
  k is final; until then the prefixes of the lists that bound the most grow. A list read to
  its end bounds nothing. A round that would cost more than scoring every posting (frequent
  terms only, whose top k needs deep reads) gives way to that (:data:`_FULL`), and so does a
  query whose lists are all short enough to read whole.

Queries with prefix phrases (a lone CJK character) or identifiers keep the full scoring of
``postgres_terms``.
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
# A long list may start at this fraction of it (1 / DEEP), when more than FIRST.
DEEP = 16
# A candidate's lookup in a list read in part costs about this many postings read in order
# (one index scan per list over a sorted array of them; measured at 100k windows): a round
# whose reads and lookups would cost more than scoring every posting gives way to that.
LOOKUP = 1
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
    return (K1 + 1) / (1 + _rho(avgdl) * (1 - x) / x) * (1 + _SLACK)


def _rho(avgdl: float) -> float:
    return min(1.0, (K1 * B / max(avgdl, 1e-12)) / _KR)


# One round of the threshold algorithm: each phrase's list read best first up to its limit
# (the main or CJK index and BOTH are separate lists: each in its own index range). What a
# chunk seen in the prefixes is known to score (its seen postings: a lower bound) and may score
# (plus each list's bound for the postings it has not seen there) decide which chunks are
# scored exactly: the k-th best known score is a floor under the k-th best true one, so a chunk
# that may score less cannot enter the top k and costs no lookups. Only the rest are looked up
# (by primary key, in the lists that did not show them). Returned: the top k, and per list how
# many postings were read and the impact of the last.
_ROUND = f"""
WITH q AS (
    SELECT term, n, w, partial, i
    FROM unnest(%(terms)s::text[], %(n)s::int[], %(idf)s::float8[], %(partial)s::bool[])
        WITH ORDINALITY AS q(term, n, w, partial, i)
), seen AS MATERIALIZED (
    SELECT q.i, p.sub, p.rid, p.imp, p.tf::float8 AS tf, p.dl::float8 AS dl,
        q.w * p.tf * ({K1} + 1) / (p.tf + {K1} * (1 - {B} + {B} * p.dl / %(avgdl)s::float8)) AS s
    FROM q CROSS JOIN LATERAL (
        (SELECT 0 AS sub, rid, {IMPACT} AS imp, tf, dl FROM postings
         WHERE kb_id = %(kb)s AND idx = %(idx)s AND term = q.term
         ORDER BY {IMPACT} DESC LIMIT q.n)
        UNION ALL
        (SELECT 1, rid, {IMPACT}, tf, dl FROM postings
         WHERE kb_id = %(kb)s AND idx = {BOTH} AND term = q.term
         ORDER BY {IMPACT} DESC LIMIT q.n)) p
), lists AS MATERIALIZED (
    SELECT i, sub, count(*) AS cnt, min(imp) AS last FROM seen GROUP BY i, sub
), bounds AS MATERIALIZED (
    -- Per phrase, the most a posting it has not shown may add (rest_bound, in SQL): 0 when
    -- its lists were read to their ends.
    SELECT q.i, q.w * coalesce(max(({K1} + 1) / (1 + %(rho)s::float8 * (1 - l.last) / l.last))
        FILTER (WHERE q.partial AND l.cnt >= q.n AND l.last > 0), 0) * (1 + {_SLACK}) AS ub
    FROM q LEFT JOIN lists l ON l.i = q.i GROUP BY q.i, q.w
), totals AS (
    SELECT sum(ub) AS ub, count(*) FILTER (WHERE ub > 0) AS open FROM bounds
), cand AS MATERIALIZED (
    -- Each chunk seen (and allowed by the filter): known score, the phrases that showed it.
    SELECT s.rid, sum(s.s) AS known, sum(b.ub) AS seen_ub,
        count(*) FILTER (WHERE b.ub > 0) AS open, array_agg(s.i) AS shown
    FROM seen s JOIN bounds b ON b.i = s.i {{join}}
    GROUP BY s.rid
), floor AS (
    SELECT coalesce((SELECT known FROM cand ORDER BY known DESC
        OFFSET %(k)s - 1 LIMIT 1), 0) AS t
), need AS MATERIALIZED (
    -- Shown by every list not read whole (its score is known), or may beat the floor.
    SELECT c.rid, c.open = t.open AS whole, c.shown FROM cand c, totals t, floor f
    WHERE c.open = t.open OR (c.known + t.ub - c.seen_ub) * (1 + {_SLACK}) >= f.t
), hits AS (
    SELECT s.i, s.rid, s.tf, s.dl FROM seen s JOIN need USING (rid)
    UNION ALL
    -- Per list, its postings of the chunks it did not show: one index scan over a sorted
    -- array of them (a lookup each, in a nested loop, costs about ten times more).
    SELECT q.i, h.rid, h.tf::float8, h.dl::float8
    FROM q JOIN bounds b ON b.i = q.i CROSS JOIN LATERAL (
        SELECT ARRAY(SELECT n.rid FROM need n WHERE NOT n.whole AND q.i <> ALL(n.shown))
            AS rids) a
    CROSS JOIN LATERAL (
        (SELECT rid, tf, dl FROM postings
         WHERE kb_id = %(kb)s AND idx = %(idx)s AND term = q.term AND rid = ANY(a.rids))
        UNION ALL
        (SELECT rid, tf, dl FROM postings
         WHERE kb_id = %(kb)s AND idx = {BOTH} AND term = q.term AND rid = ANY(a.rids))) h
    WHERE b.ub > 0
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
SELECT 1, (i - 1) * 2 + sub, cnt, last FROM lists
UNION ALL
SELECT 2, (SELECT count(*) FROM cand), count(*), NULL FROM need WHERE NOT whole
"""

# Every posting of every phrase scored (the idf from term_stats: no count over the postings,
# and a term's postings are one index range read index-only): one aggregate, then the filter
# on the chunks that scored, then the top k.
_FULL = f"""
WITH q AS (
    SELECT term, w, i FROM unnest(%(terms)s::text[], %(idf)s::float8[])
        WITH ORDINALITY AS q(term, w, i)
), scored AS MATERIALIZED (
    SELECT p.rid, sum(q.w * p.tf * ({K1} + 1)
        / (p.tf + {K1} * (1 - {B} + {B} * p.dl / %(avgdl)s::float8))) AS score
    FROM q CROSS JOIN LATERAL (
        SELECT rid, tf::float8 AS tf, dl::float8 AS dl FROM postings
        WHERE kb_id = %(kb)s AND idx IN (%(idx)s, {BOTH}) AND term = q.term OFFSET 0) p
    GROUP BY p.rid
)
SELECT s.rid, s.score FROM scored s {{join}} ORDER BY s.score DESC, s.rid LIMIT %(k)s
"""


def round_sql(where: str) -> str:
    """One round's statement; ``where`` filters the chunks that may be returned ("true")."""
    join = "" if where == "true" else f"JOIN chunks c ON c.rid = s.rid WHERE {where}"
    return _ROUND.format(join=join)


def full_sql(where: str) -> str:
    """Every posting scored; ``where`` filters the chunks that may be returned ("true")."""
    join = "" if where == "true" else f"JOIN chunks c ON c.rid = s.rid WHERE {where}"
    return _FULL.format(join=join)


def top_k(
    conn: psycopg.Connection[Any],
    info: dict[str, Any],
    index: int,
    terms: Sequence[str],
    k: int,
    where: str,
    filter_params: dict[str, Any],
    stats: dict[str, int] | None = None,
) -> list[tuple[int, float]]:
    """The top ``k`` (rid, score) for exact ``terms`` (one per phrase, repeats counted) of
    ``index``; ``info`` is the knowledge base's row, read in the caller's snapshot.

    ``stats`` (if given) adds up the rounds, the chunks seen and looked up in them, and the
    postings scored by full scoring."""
    counts = stats if stats is not None else {}
    for key in ("rounds", "seen", "looked_up", "full_scoring"):
        counts.setdefault(key, 0)
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
    params = filter_params | {
        "terms": phrases, "idf": weights, "kb": info["kb_id"], "idx": index,
        "avgdl": avgdl, "k": k, "rho": _rho(avgdl),
    }  # fmt: skip
    # A long list starts deeper (1/DEEP of it) when its term may add at least half what the
    # query's rarest term may: a frequent word's list is read only as far as it bounds much.
    most = max(weights)
    limits = [
        df[t] if df[t] <= WHOLE else max(FIRST, df[t] // DEEP) if w >= most / 2 else FIRST
        for t, w in zip(phrases, weights, strict=True)
    ]
    everything = sum(df[t] for t in phrases)
    looked_up = 0
    while True:
        partial = [limit < df[t] for t, limit in zip(phrases, limits, strict=True)]
        # Lists all read whole, or a round dearer than scoring every posting: score them all.
        # A round reads its prefixes and looks up the chunks the last one could not rule out
        # (about as many again per list grown).
        cost = sum(limits) + LOOKUP * looked_up * GROWTH
        if not any(partial) or cost > everything:
            counts["full_scoring"] += everything
            return [
                (int(rid), float(score))
                for rid, score in conn.execute(full_sql(where).encode(), params).fetchall()
            ]
        params |= {"n": limits, "partial": partial}
        top: list[tuple[int, float]] = []
        last: dict[int, float] = {}
        for kind, key, value, score in conn.execute(round_sql(where).encode(), params).fetchall():
            if kind == 0:
                top.append((int(value), float(score)))
            elif kind == 2:
                looked_up = int(value)
                counts["rounds"] += 1
                counts["seen"] += int(key)
                counts["looked_up"] += looked_up
            elif int(value) >= limits[key // 2] < df[phrases[key // 2]]:
                # A list that filled its limit may hold more, none above its last impact.
                last[key // 2] = max(last.get(key // 2, 0.0), float(score))
        if not last:
            return top  # every list read whole: every chunk with a query term was scored
        threshold = top[-1][1] if len(top) >= k else 0.0
        rest = {i: weights[i] * rest_bound(x, avgdl) for i, x in last.items()}
        if sum(rest.values()) < threshold:
            return top
        # Grow the lists whose unread postings may still add the most: a list of a frequent
        # (low idf) term bounds little however deep it is read, and its extra chunks would
        # need lookups in the others.
        most = max(rest.values())
        limits = [
            min(df[t], limit * GROWTH) if rest.get(i, 0.0) >= most / 2 else limit
            for i, (t, limit) in enumerate(zip(phrases, limits, strict=True))
        ]
