"""The PostgreSQL store's search statements (dense exact and HNSW, neighbours), as SQL text.

Chunks are aliased ``c``; a filter is a WHERE condition from ``postgres_schema.filter_sql``
("true": none, and then no join of chunks before the top k).
"""

from __future__ import annotations

from citewise.store.postgres_schema import C_COLUMNS

__all__ = ["NEIGHBOURS", "approximate_dense", "exact_dense"]


def exact_dense(where: str) -> str:
    """Every window of the knowledge base scored; a chunk scores as its best window. Vectors
    are unit length, so the inner product is the cosine."""
    join = "" if where == "true" else "JOIN chunks c ON c.rid = w.rid"
    return f"""WITH best AS MATERIALIZED (
        SELECT w.rid, max(-(w.embedding <#> %(q)s)) AS score FROM windows w {join}
        WHERE w.kb_id = %(kb)s AND {where}
        GROUP BY w.rid ORDER BY score DESC, w.rid LIMIT %(k)s)
    SELECT best.score, {C_COLUMNS} FROM best JOIN chunks c ON c.rid = best.rid
    ORDER BY best.score DESC, best.rid"""


def approximate_dense(where: str, dim: int, kb_id: int) -> str:
    """The ``%(n)s`` nearest windows through the knowledge base's HNSW index, then the best
    ``%(k)s`` chunks among them. The partial index matches only this exact expression and a
    literal kb_id."""
    join = "" if where == "true" else "JOIN chunks c ON c.rid = w.rid"
    return f"""WITH near AS MATERIALIZED (
        SELECT w.rid, w.embedding::vector({int(dim)}) <=> %(q)s::vector({int(dim)}) AS d
        FROM windows w {join}
        WHERE w.kb_id = {int(kb_id)} AND {where}
        ORDER BY d LIMIT %(n)s
    ), best AS (
        SELECT rid, max(1 - d) AS score FROM near
        GROUP BY rid ORDER BY score DESC, rid LIMIT %(k)s)
    SELECT best.score, {C_COLUMNS} FROM best JOIN chunks c ON c.rid = best.rid
    ORDER BY best.score DESC, best.rid"""


# A chunk's ``%(n)s`` neighbours before it in its document, itself and ``%(n)s`` after.
NEIGHBOURS = f"""WITH me AS (
    SELECT doc_id, position FROM chunks WHERE kb_id = %(kb)s AND chunk_id = %(id)s)
SELECT * FROM (
    (SELECT {C_COLUMNS} FROM chunks c, me WHERE c.kb_id = %(kb)s
     AND c.doc_id = me.doc_id AND c.position < me.position
     ORDER BY c.position DESC LIMIT %(n)s)
    UNION ALL
    (SELECT {C_COLUMNS} FROM chunks c, me WHERE c.kb_id = %(kb)s
     AND c.doc_id = me.doc_id AND c.position >= me.position
     ORDER BY c.position LIMIT %(n1)s)) w
ORDER BY position"""
