"""The GitHub store in the shared Postgres: what one machine fetched, no machine fetches again.

The same three tables as the SQLite store (`github.store`), in the `swe_forge` schema: REST responses
by URL with their ETag, enriched PRs by (repo, number), PRs known not to exist. Writes are upserts, so
machines storing the same answer at once leave one row (the last writer's, as SQLite's
`INSERT OR REPLACE`), and a retried write after a lost connection changes nothing. A lookup of a chunk
of PR keys is one round trip (`unnest` of the keys), which matters when the database is across a network.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable

from psycopg2.extras import execute_values

from swe_forge_dagster.common.postgres import SCHEMA, Cursor, Database
from swe_forge_dagster.github.models import EnrichedPR
from swe_forge_dagster.github.store import CachedResponse, Key

TABLES = f"""
CREATE TABLE IF NOT EXISTS {SCHEMA}.github_http_cache (
    key TEXT PRIMARY KEY, etag TEXT, status INTEGER NOT NULL, headers TEXT NOT NULL, body BYTEA NOT NULL,
    stored_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS {SCHEMA}.github_enriched_prs (
    repo TEXT NOT NULL, number BIGINT NOT NULL, data TEXT NOT NULL, stored_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (repo, number)
);
CREATE TABLE IF NOT EXISTS {SCHEMA}.github_missing_prs (
    repo TEXT NOT NULL, number BIGINT NOT NULL, reason TEXT, stored_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (repo, number)
);
"""


class PostgresGithubStore:
    """`github.store.GithubStore`'s interface over the shared database; safe across threads and machines."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure_tables("github", TABLES)

    def __repr__(self) -> str:
        return f"PostgresGithubStore({self.db.where})"

    # -- REST responses -------------------------------------------------------------------
    def get_response(self, key: str) -> CachedResponse | None:
        def read(cursor: Cursor) -> tuple | None:
            cursor.execute(f"SELECT etag, status, headers, body FROM {SCHEMA}.github_http_cache WHERE key = %s", (key,))
            return cursor.fetchone()

        row = self.db.run(read)
        if row is None:
            return None
        return CachedResponse(etag=row[0], status=row[1], headers=json.loads(row[2]), body=bytes(row[3]))

    def put_response(self, key: str, response: CachedResponse) -> None:
        row = (key, response.etag, response.status, json.dumps(response.headers), response.body, time.time())
        self.db.run(
            lambda cursor: cursor.execute(
                f"INSERT INTO {SCHEMA}.github_http_cache VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO "
                "UPDATE SET etag = EXCLUDED.etag, status = EXCLUDED.status, headers = EXCLUDED.headers, "
                "body = EXCLUDED.body, stored_at = EXCLUDED.stored_at",
                row,
            )
        )

    # -- enriched and missing PRs ---------------------------------------------------------
    def get_enriched(self, keys: Iterable[Key]) -> dict[Key, EnrichedPR]:
        return {
            key: EnrichedPR.model_validate_json(data)
            for key, data in self._lookup("github_enriched_prs", "data", keys).items()
        }

    def get_missing(self, keys: Iterable[Key]) -> dict[Key, str]:
        return self._lookup("github_missing_prs", "reason", keys)

    def _lookup(self, table: str, column: str, keys: Iterable[Key]) -> dict[Key, str]:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        repos, numbers = [repo for repo, _ in wanted], [number for _, number in wanted]

        def read(cursor: Cursor) -> list[tuple]:
            cursor.execute(
                f"SELECT t.repo, t.number, t.{column} FROM {SCHEMA}.{table} t "
                "JOIN unnest(%s::text[], %s::bigint[]) AS k(repo, number) USING (repo, number)",
                (repos, numbers),
            )
            return cursor.fetchall()

        return {(repo, int(number)): value for repo, number, value in self.db.run(read)}

    def put_chunk(self, enriched: Iterable[EnrichedPR], missing: dict[Key, str]) -> None:
        """Store one chunk's outcomes in one transaction."""
        now = time.time()
        # One row per key (ON CONFLICT DO UPDATE cannot touch a row twice in a statement), in key order:
        # every writer then locks rows in the same order, so concurrent chunks never deadlock.
        latest = {(pr.repo, pr.number): (pr.repo, pr.number, pr.model_dump_json(), now) for pr in enriched}
        found = [latest[key] for key in sorted(latest)]
        gone = [(repo, number, missing[(repo, number)], now) for repo, number in sorted(missing)]

        def write(cursor: Cursor) -> None:
            if found:
                execute_values(
                    cursor,
                    f"INSERT INTO {SCHEMA}.github_enriched_prs VALUES %s ON CONFLICT (repo, number) "
                    "DO UPDATE SET data = EXCLUDED.data, stored_at = EXCLUDED.stored_at",
                    found,
                )
            if gone:
                execute_values(
                    cursor,
                    f"INSERT INTO {SCHEMA}.github_missing_prs VALUES %s ON CONFLICT (repo, number) "
                    "DO UPDATE SET reason = EXCLUDED.reason, stored_at = EXCLUDED.stored_at",
                    gone,
                )

        if found or gone:
            self.db.run(write, transaction=True)
