"""The processed-PR ledger in the shared Postgres: one row per PR for every machine.

The JSONL ledger (`candidates.ledger`) keeps a line per outcome and the last line wins; here the PR is
the primary key and an append is an upsert, so the last outcome wins the same way and a PR is never
recorded twice, however many machines record it at once.

The `--pr-file` JSONL is still read (not written) when it exists: PRs a machine processed before it
joined the shared database, or the seed's own ledger file, are skipped as before, and the rows in the
database take precedence over its lines.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path

from psycopg2.extras import execute_values

from swe_forge_dagster.candidates.ledger import Key, Ledger, LedgerEntry
from swe_forge_dagster.common.postgres import SCHEMA, Cursor, Database

TABLES = f"""
CREATE TABLE IF NOT EXISTS {SCHEMA}.processed_prs (
    repo TEXT NOT NULL, pr BIGINT NOT NULL, outcome TEXT, reason TEXT, stage TEXT, hour TEXT, at TEXT,
    PRIMARY KEY (repo, pr)
);
"""
_FIELDS = ("repo", "pr", "outcome", "reason", "stage", "hour", "at")


class PostgresLedger:
    """`candidates.ledger.Ledger`'s interface (`load`, `append`) over the shared database."""

    def __init__(self, db: Database, pr_file: Path | None = None) -> None:
        self.db = db
        self.pr_file = Ledger(pr_file) if pr_file is not None else None
        db.ensure_tables("processed_prs", TABLES)

    def __repr__(self) -> str:
        return f"PostgresLedger({self.db.where})"

    def load(self) -> dict[Key, LedgerEntry]:
        """Every PR recorded so far: the `--pr-file` lines, then the database's rows over them."""
        entries = self.pr_file.load() if self.pr_file is not None else {}

        def read(cursor: Cursor) -> list[tuple]:
            cursor.execute(f"SELECT {', '.join(_FIELDS)} FROM {SCHEMA}.processed_prs")
            return cursor.fetchall()

        for row in self.db.run(read):
            entry = LedgerEntry(*row[:1], int(row[1]), *row[2:])
            entries[entry.key] = entry
        return entries

    def append(self, entries: Iterable[LedgerEntry]) -> int:
        """Record these outcomes (one transaction); the count recorded."""
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        # One row per PR, the last given (ON CONFLICT DO UPDATE cannot touch a row twice in a statement), in
        # key order: every writer then locks rows in the same order, so concurrent appends never deadlock.
        latest = {e.key: (e.repo, e.pr, e.outcome, e.reason, e.stage, e.hour, e.at or now) for e in entries}
        rows = [latest[key] for key in sorted(latest)]
        if not rows:
            return 0
        self.db.run(
            lambda cursor: execute_values(
                cursor,
                f"INSERT INTO {SCHEMA}.processed_prs ({', '.join(_FIELDS)}) VALUES %s ON CONFLICT (repo, pr) DO "
                "UPDATE SET outcome = EXCLUDED.outcome, reason = EXCLUDED.reason, stage = EXCLUDED.stage, "
                "hour = EXCLUDED.hour, at = EXCLUDED.at",
                rows,
            ),
            transaction=True,
        )
        return len(rows)
