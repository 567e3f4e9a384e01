"""PostgreSQL stores put back to an older schema version, as an older citewise left them."""

from __future__ import annotations

import psycopg

from citewise.store.postgres_bm25 import IMPACT
from tests import pg


def in_schema(url: str, *statements: str) -> None:
    """Run ``statements`` against ``url``'s schema, named ``{s}`` in them (autocommit)."""
    schema = url.split("schema=")[1]
    with psycopg.connect(pg.server_url(), autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement.format(s=f'"{schema}"').encode())


def to_version_4(url: str) -> None:
    """Undo migration 5 (tf and dl in both postings indexes) in ``url``'s schema."""
    in_schema(
        url,
        "CREATE UNIQUE INDEX postings_old ON {s}.postings (kb_id, idx, term, rid)",
        "ALTER TABLE {s}.postings DROP CONSTRAINT postings_pkey",
        "ALTER TABLE {s}.postings ADD CONSTRAINT postings_pkey PRIMARY KEY USING INDEX "
        "postings_old",
        f"CREATE INDEX postings_impact ON {{s}}.postings (kb_id, idx, term, {IMPACT} DESC) "
        "INCLUDE (rid)",
        "DROP INDEX {s}.postings_best",
        "DELETE FROM {s}.schema_version WHERE version >= 5",
    )


def to_version_3(url: str) -> None:
    """Undo migrations 5 and 4 (term_stats, its triggers, the impact index) in ``url``'s
    schema."""
    to_version_4(url)
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
