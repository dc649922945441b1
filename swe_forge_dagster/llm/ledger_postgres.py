"""The LLM call ledger in the shared Postgres: every machine's calls in one table, each exactly once.

A row per call, the same columns as the JSONL ledger (`llm.ledger.LLM_CALLS_SCHEMA`). Each append
carries an id made once before the first attempt, and the insert skips an id already present: when
the connection drops after the server committed but before it answered, the retry records nothing
twice. `llm_calls_table` reads the rows back as a pyarrow Table with that schema, which the catalog
registers as the `llm_calls` view when the shared database is in use (with the lake's JSONL calls, recorded
before the setting, added to it; only for a query that names the view).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid

import pyarrow as pa

from swe_forge_dagster.common.postgres import SCHEMA, Cursor, Database, shared_database
from swe_forge_dagster.llm.ledger import LLM_CALLS_SCHEMA, CallRecord

TABLES = f"""
CREATE TABLE IF NOT EXISTS {SCHEMA}.llm_calls (
    id UUID PRIMARY KEY, at TIMESTAMPTZ NOT NULL, stage TEXT, item TEXT, model TEXT, attempt BIGINT,
    outcome TEXT, error TEXT, prompt_tokens BIGINT, completion_tokens BIGINT, cost DOUBLE PRECISION,
    cost_source TEXT, latency_ms DOUBLE PRECISION, cache_hit BOOLEAN, call_form TEXT
);
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = '{SCHEMA}'
                   AND table_name = 'llm_calls' AND column_name = 'call_form') THEN
        ALTER TABLE {SCHEMA}.llm_calls ADD COLUMN call_form TEXT;  -- a table made before the column existed
    END IF;
END $$;
CREATE INDEX IF NOT EXISTS llm_calls_at ON {SCHEMA}.llm_calls (at);
"""
COLUMNS = LLM_CALLS_SCHEMA.names  # "at" first, then the record's other fields


class PostgresCallLedger:
    """`llm.ledger.CallLedger`'s interface (`append`) over the shared database, plus `table()` to read it."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure_tables("llm_calls", TABLES)

    def __repr__(self) -> str:
        return f"PostgresCallLedger({self.db.where})"

    def append(self, record: CallRecord) -> None:
        fields = dataclasses.asdict(record)
        row = (str(uuid.uuid4()), *(fields[name] for name in COLUMNS))
        placeholders = ", ".join(["%s"] * len(row))
        self.db.run(
            lambda cursor: cursor.execute(
                f"INSERT INTO {SCHEMA}.llm_calls (id, {', '.join(COLUMNS)}) VALUES ({placeholders}) "
                "ON CONFLICT (id) DO NOTHING",
                row,
            )
        )

    def table(self) -> pa.Table:
        """Every recorded call, oldest first, as `LLM_CALLS_SCHEMA`."""

        def read(cursor: Cursor) -> list[tuple]:
            cursor.execute(f"SELECT {', '.join(COLUMNS)} FROM {SCHEMA}.llm_calls ORDER BY at, id")
            return cursor.fetchall()

        rows = self.db.run(read)
        columns = {name: [row[i] for row in rows] for i, name in enumerate(COLUMNS)}
        columns["at"] = [value.astimezone(dt.UTC) for value in columns["at"]]
        return pa.Table.from_pydict(columns, schema=LLM_CALLS_SCHEMA)


def llm_calls_table(db: Database | None = None) -> pa.Table | None:
    """The `llm_calls` rows from the shared database (`SWE_FORGE_POSTGRES_URL`), or None when it is not set
    (then the calls are the JSONL files under the lake, as always)."""
    db = db or shared_database()
    return PostgresCallLedger(db).table() if db is not None else None
