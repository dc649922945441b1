"""Connections to the shared Postgres (`SWE_FORGE_POSTGRES_URL`) for the state every machine shares.

When the setting is present, the GitHub store, the LLM answer cache, the processed-PR ledger, the LLM
call ledger and the request slots live in this database (`wiring.shared_state` chooses); unset, they
stay in files under the home. The URL holds the password: it is read by name when needed
(`common.postgres_url`), never put in resource config, and never shown (`Database.where` names the
server without it).

One `Database` per URL and process keeps a small pool of autocommit connections: a thread takes one
for a statement or a transaction and gives it back, so the 10 LLM calls in flight do not open 10
connections each time. Connection loss (a restarted server, a dropped network) is retried: every write
here is an upsert or insert-if-absent, so doing one twice changes nothing. The tables live in their own
schema, `swe_forge`, beside Dagster's; each store creates its tables once per process, under a
transaction-scoped advisory lock so that machines starting together do not race on `CREATE TABLE`.

Sessions ask the server for TCP keepalives, so a session whose machine vanished (power loss, network
cut) is ended within about a minute, and with it the request slots it held (`common.slots_postgres`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg2
import psycopg2.extensions

from swe_forge_dagster.common.postgres_url import POSTGRES_URL_SETTING, dsn_parts, libpq_url, postgres_url

SCHEMA = "swe_forge"
_SCHEMA_LOCK = 0x5F5E_F0F0  # pg_advisory_xact_lock key serializing table creation across machines
_TRANSIENT = (psycopg2.OperationalError, psycopg2.InterfaceError)
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}
_SERVER_KEEPALIVES = "-c tcp_keepalives_idle=30 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=3"

T = TypeVar("T")
Cursor = psycopg2.extensions.cursor


class SharedStateError(RuntimeError):
    """The shared database cannot be reached or used (the message names the setting, never the password)."""


class Database:
    """A pool of connections to one Postgres database; `run(work)` executes `work(cursor)` with retries."""

    def __init__(self, url: str, max_idle: int = 8, attempts: int = 4, backoff: float = 0.25) -> None:
        self._dsn = libpq_url(url)
        parts = dsn_parts(url)  # a PostgresUrlError that never repeats the URL when libpq cannot parse it
        self.where = f"{parts.get('host', 'localhost')}:{parts.get('port', 5432)}/{parts.get('dbname', '')}"
        self._extra_options = "options" not in parts
        self.max_idle = max_idle
        self.attempts = attempts
        self.backoff = backoff
        self._idle: list[psycopg2.extensions.connection] = []
        self._lock = threading.Lock()
        self._ready: set[str] = set()

    def __repr__(self) -> str:
        return f"Database({self.where})"

    # -- connections ----------------------------------------------------------------------
    def connect(self) -> psycopg2.extensions.connection:
        """A new autocommit connection of its own (the caller closes it)."""
        kwargs: dict[str, Any] = {"application_name": "swe-forge", "connect_timeout": 10, **_KEEPALIVES}
        if self._extra_options:
            kwargs["options"] = _SERVER_KEEPALIVES
        try:
            connection = psycopg2.connect(self._dsn, **kwargs)
        except psycopg2.Error as exc:
            raise self.error("cannot connect", exc) from None
        connection.autocommit = True
        return connection

    @contextmanager
    def connection(self) -> Iterator[psycopg2.extensions.connection]:
        """A pooled connection for the `with` block; given back only when it is healthy and idle."""
        with self._lock:
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            connection = self.connect()
        try:
            yield connection
        finally:
            self._give_back(connection)

    def _give_back(self, connection: psycopg2.extensions.connection) -> None:
        healthy = not connection.closed and (
            connection.get_transaction_status() == psycopg2.extensions.TRANSACTION_STATUS_IDLE
        )
        if healthy:
            with self._lock:
                if len(self._idle) < self.max_idle:
                    self._idle.append(connection)
                    return
        connection.close()

    def close(self) -> None:
        """Close the idle connections (those in use are closed when given back)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    # -- statements -----------------------------------------------------------------------
    def run(self, work: Callable[[Cursor], T], *, transaction: bool = False) -> T:
        """`work(cursor)` on a pooled connection, in one transaction if asked; retried when the connection
        is lost or the server aborts it (serialization, deadlock): callers only write idempotently."""
        for attempt in range(self.attempts):
            try:
                with self.connection() as connection, connection.cursor() as cursor:
                    if not transaction:
                        return work(cursor)
                    cursor.execute("BEGIN")
                    try:
                        result = work(cursor)
                        cursor.execute("COMMIT")
                    except BaseException:
                        if not connection.closed:
                            try:
                                cursor.execute("ROLLBACK")
                            except psycopg2.Error:
                                connection.close()
                        raise
                    return result
            except _TRANSIENT as exc:
                # the server restarted or the network dropped: every idle connection is as dead as this one
                # (they are never checked), so they all go, and the retry opens a fresh one
                self.close()
                if attempt == self.attempts - 1:
                    raise self.error("lost the connection", exc) from None
                time.sleep(self.backoff * 2**attempt)
            except SharedStateError:
                if attempt == self.attempts - 1:
                    raise
                time.sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable")

    def ensure_tables(self, name: str, ddl: str) -> None:
        """Create a store's tables (idempotent DDL) once per process, one machine at a time."""
        if name in self._ready:
            return

        def create(cursor: Cursor) -> None:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            cursor.execute(ddl)

        self.run(create, transaction=True)
        self._ready.add(name)

    def error(self, what: str, exc: BaseException) -> SharedStateError:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return SharedStateError(f"shared database {self.where} ({POSTGRES_URL_SETTING}): {what}: {detail}")


_databases: dict[tuple[str, int], Database] = {}
_registry_lock = threading.Lock()


def database(url: str) -> Database:
    """The process's `Database` for `url` (one pool per URL; a forked child gets its own)."""
    key = (url, os.getpid())
    with _registry_lock:
        if key not in _databases:
            _databases[key] = Database(url)
        return _databases[key]


def shared_database() -> Database | None:
    """The database `SWE_FORGE_POSTGRES_URL` names, or None: the embedded (file) stores are used."""
    url = postgres_url()
    return database(url) if url else None
