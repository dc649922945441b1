"""The shared Postgres when things go wrong: a restarted server, a session lost under a slot, a database down.

Real PostgreSQL on 127.0.0.1 (`tests/support/postgres_server.py`); a restart is simulated the way the server
sees one, by ending the sessions (`pg_terminate_backend`).
"""

from __future__ import annotations

import contextlib

import psycopg2

from swe_forge_dagster.common.postgres import Database
from swe_forge_dagster.common.slots_postgres import PostgresSlots
from tests.support.postgres_server import PostgresServer


def end_sessions(server: PostgresServer, url: str) -> int:
    """End every session on `url`'s database, as a server restart does; how many were ended."""
    database = url.rsplit("/", 1)[1]
    with server.admin() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s", (database,))
        return cursor.fetchone()[0]


def test_after_a_restart_a_full_pool_of_dead_connections_costs_one_retry(
    postgres_db: str, postgres_server: PostgresServer
) -> None:
    db = Database(postgres_db, backoff=0.01)
    with contextlib.ExitStack() as stack:  # 8 threads' worth of connections in use at once, then all idle
        for _ in range(db.max_idle):
            stack.enter_context(db.connection())
    assert len(db._idle) == db.max_idle
    assert end_sessions(postgres_server, postgres_db) == db.max_idle
    assert db.run(lambda cursor: (cursor.execute("SELECT 41 + 1"), cursor.fetchone()[0])[1]) == 42
    assert len(db._idle) == 1  # the dead ones were dropped, not handed to the next statements
    db.close()


def test_a_slot_taken_before_a_lost_session_never_releases_the_same_slot_taken_after(
    postgres_db: str, postgres_server: PostgresServer
) -> None:
    slots = PostgresSlots(Database(postgres_db), "llm_api", 2)
    observer = psycopg2.connect(postgres_db)
    observer.autocommit = True

    def free(index: int) -> bool:  # taken and given back at once by another session
        with observer.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", (slots.namespace, index))
            taken = cursor.fetchone()[0]
            if taken:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", (slots.namespace, index))
            return taken

    with contextlib.ExitStack() as thread_a, contextlib.ExitStack() as thread_b:
        a = thread_a.enter_context(slots.hold(timeout=10))
        with postgres_server.admin() as cursor:  # A's session ends under it (a restart, a cut)
            assert slots._connection is not None
            cursor.execute("SELECT pg_terminate_backend(%s)", (slots._connection.get_backend_pid(),))
        with observer.cursor() as cursor:  # another machine holds the other slot: B can only get A's index
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", (slots.namespace, 1 - a))
        assert thread_b.enter_context(slots.hold(timeout=10)) == a  # on a new session
        thread_a.close()  # A is done: its lock went with the old session, and B's must stay
        assert not free(a)
        thread_b.close()
    assert free(a)
    slots.close()
    observer.close()
