"""The LLM answer cache in the shared Postgres: an answer paid for on one machine serves them all.

Same key (`llm.cache.request_key`) and value as the SQLite cache. A put is an upsert, as SQLite's
`INSERT OR REPLACE`: when a stored answer no longer validates (the output model changed), the client
asks again and the new answer replaces it everywhere.
"""

from __future__ import annotations

import json
import time
from typing import Any

from swe_forge_dagster.common.postgres import SCHEMA, Cursor, Database

TABLES = f"""
CREATE TABLE IF NOT EXISTS {SCHEMA}.llm_answers (
    key TEXT PRIMARY KEY, stage TEXT, value TEXT NOT NULL, stored_at DOUBLE PRECISION NOT NULL
);
"""


class PostgresAnswerCache:
    """`llm.cache.AnswerCache`'s interface (`get`, `put`) over the shared database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure_tables("llm_answers", TABLES)

    def __repr__(self) -> str:
        return f"PostgresAnswerCache({self.db.where})"

    def get(self, key: str) -> dict[str, Any] | None:
        def read(cursor: Cursor) -> tuple | None:
            cursor.execute(f"SELECT value FROM {SCHEMA}.llm_answers WHERE key = %s", (key,))
            return cursor.fetchone()

        row = self.db.run(read)
        return json.loads(row[0]) if row else None

    def put(self, key: str, stage: str, value: dict[str, Any]) -> None:
        self.db.run(
            lambda cursor: cursor.execute(
                f"INSERT INTO {SCHEMA}.llm_answers VALUES (%s, %s, %s, %s) ON CONFLICT (key) DO UPDATE "
                "SET stage = EXCLUDED.stage, value = EXCLUDED.value, stored_at = EXCLUDED.stored_at",
                (key, stage, json.dumps(value), time.time()),
            )
        )
