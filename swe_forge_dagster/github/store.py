"""What GitHub already told us, kept on disk so no run ever pays for it twice.

Three tables in one SQLite file under `SWE_FORGE_HOME/cache/github/`: REST responses by URL
with their ETag (a conditional request answered 304 costs no rate limit), enriched PRs by
(repo, number), and PRs known not to exist. SQLite in WAL mode takes concurrent writers from
several run processes; each chunk commits on its own, so a crash loses at most the chunk in
flight.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from swe_forge_dagster.github.models import EnrichedPR

Key = tuple[str, int]

SCHEMA = """
CREATE TABLE IF NOT EXISTS http_cache (
    key TEXT PRIMARY KEY, etag TEXT, status INTEGER, headers TEXT, body BLOB, stored_at REAL
);
CREATE TABLE IF NOT EXISTS enriched_prs (
    repo TEXT, number INTEGER, data TEXT, stored_at REAL, PRIMARY KEY (repo, number)
);
CREATE TABLE IF NOT EXISTS missing_prs (
    repo TEXT, number INTEGER, reason TEXT, stored_at REAL, PRIMARY KEY (repo, number)
);
"""


@dataclass(frozen=True)
class CachedResponse:
    etag: str | None
    status: int
    headers: dict[str, str]
    body: bytes


class ResponseStore(Protocol):
    """What the client and the enricher use: this SQLite store (one machine) or the shared database's
    (`github.store_postgres`, every machine); `wiring.shared_state` chooses by the setting."""

    def get_response(self, key: str) -> CachedResponse | None: ...
    def put_response(self, key: str, response: CachedResponse) -> None: ...
    def get_enriched(self, keys: Iterable[Key]) -> dict[Key, EnrichedPR]: ...
    def get_missing(self, keys: Iterable[Key]) -> dict[Key, str]: ...
    def put_chunk(self, enriched: Iterable[EnrichedPR], missing: dict[Key, str]) -> None: ...


class GithubStore:
    """Thread-safe (one connection per thread) and process-safe (SQLite locking, WAL)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as con:
            con.execute("PRAGMA journal_mode=WAL")
            con.executescript(SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            con.execute("PRAGMA busy_timeout=60000")
            con.execute("PRAGMA synchronous=NORMAL")
            self._local.con = con
        yield con

    # -- REST responses -------------------------------------------------------------------
    def get_response(self, key: str) -> CachedResponse | None:
        with self._connect() as con:
            row = con.execute("SELECT etag, status, headers, body FROM http_cache WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return CachedResponse(etag=row[0], status=row[1], headers=json.loads(row[2]), body=row[3])

    def put_response(self, key: str, response: CachedResponse) -> None:
        with self._connect() as con:
            con.execute(
                "INSERT OR REPLACE INTO http_cache VALUES (?, ?, ?, ?, ?, ?)",
                (key, response.etag, response.status, json.dumps(response.headers), response.body, time.time()),
            )

    # -- enriched and missing PRs ---------------------------------------------------------
    def get_enriched(self, keys: Iterable[Key]) -> dict[Key, EnrichedPR]:
        found: dict[Key, EnrichedPR] = {}
        with self._connect() as con:
            for repo, number in keys:
                row = con.execute(
                    "SELECT data FROM enriched_prs WHERE repo = ? AND number = ?", (repo, number)
                ).fetchone()
                if row:
                    found[(repo, number)] = EnrichedPR.model_validate_json(row[0])
        return found

    def get_missing(self, keys: Iterable[Key]) -> dict[Key, str]:
        found: dict[Key, str] = {}
        with self._connect() as con:
            for repo, number in keys:
                row = con.execute(
                    "SELECT reason FROM missing_prs WHERE repo = ? AND number = ?", (repo, number)
                ).fetchone()
                if row:
                    found[(repo, number)] = row[0]
        return found

    def put_chunk(self, enriched: Iterable[EnrichedPR], missing: dict[Key, str]) -> None:
        """Store one chunk's outcomes in one transaction."""
        now = time.time()
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                con.executemany(
                    "INSERT OR REPLACE INTO enriched_prs VALUES (?, ?, ?, ?)",
                    [(pr.repo, pr.number, pr.model_dump_json(), now) for pr in enriched],
                )
                con.executemany(
                    "INSERT OR REPLACE INTO missing_prs VALUES (?, ?, ?, ?)",
                    [(repo, number, reason, now) for (repo, number), reason in missing.items()],
                )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
