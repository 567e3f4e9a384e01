"""PostgreSQL stores put back to an older schema version, as an older citewise left them."""

from __future__ import annotations

import psycopg

from tests import pg


def in_schema(url: str, *statements: str) -> None:
    """Run ``statements`` against ``url``'s schema, named ``{s}`` in them (autocommit)."""
    schema = url.split("schema=")[1]
    with psycopg.connect(pg.server_url(), autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement.format(s=f'"{schema}"').encode())


def to_version_3(url: str) -> None:
    """Undo migration 4 (term_stats, its triggers, the impact index) in ``url``'s schema."""
    in_schema(
        url,
        "DROP TRIGGER postings_added ON {s}.postings",
        "DROP TRIGGER postings_removed ON {s}.postings",
        "DROP FUNCTION {s}.term_stats_added()",
        "DROP FUNCTION {s}.term_stats_removed()",
        "DROP TABLE {s}.term_stats",
        "DROP INDEX {s}.postings_impact",
        "DELETE FROM {s}.schema_version WHERE version >= 4",
    )
