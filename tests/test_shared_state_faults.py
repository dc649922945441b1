"""The shared Postgres when things go wrong: a restarted server, a session lost under a slot, a database down.

Real PostgreSQL on 127.0.0.1 (`tests/support/postgres_server.py`); a restart is simulated the way the server
sees one, by ending the sessions (`pg_terminate_backend`).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import psycopg2
import pytest

from swe_forge_dagster.common.dagster_names import LLM_API_POOL
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.common.postgres import Database
from swe_forge_dagster.common.slots_postgres import PostgresSlots
from swe_forge_dagster.llm.ledger import CallRecord
from swe_forge_dagster.wiring.catalog import query, refresh_catalog, refresh_catalog_or_warning
from swe_forge_dagster.wiring.shared_state import call_ledger
from tests.support.postgres_server import PostgresServer

SETTING = "SWE_FORGE_POSTGRES_URL"


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
    slots = PostgresSlots(Database(postgres_db), LLM_API_POOL, 2)
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


DOWN = "postgresql://swe:pw-not-to-be-shown@127.0.0.1:9/nothing"  # a closed port: the database is down


def test_with_the_database_down_sql_over_the_lake_still_answers(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_"))}
    env.update({SETTING: DOWN, "SWE_FORGE_HOME": str(tmp_path / "home"), "COLUMNS": "200", "NO_COLOR": "1"})

    def sql(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "swe_forge_dagster.cli", "sql", *args, "--format", "json"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )

    for text in ("SELECT count(*) AS n FROM gharchive_pr_events", "SELECT count(*) AS n FROM llm_calls"):
        result = sql(text)
        assert result.returncode == 0 and json.loads(result.stdout) == [{"n": 0}], result.stderr[-3000:]
        assert "Traceback" not in result.stderr and "pw-not-to-be-shown" not in result.stderr
        assert "warning" in result.stderr and SETTING in result.stderr  # the catalog refresh: llm_calls without rows
    result = sql("SELECT count(*) AS n FROM gharchive_pr_events", "--no-refresh")  # the database is not asked
    assert result.returncode == 0 and json.loads(result.stdout) == [{"n": 0}] and result.stderr == ""


def test_with_the_database_down_the_refresh_after_an_ingest_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SETTING, DOWN)
    layout = HomeLayout.of(tmp_path / "home")
    warning = refresh_catalog_or_warning(layout.catalog, layout.lake)
    assert warning is not None and SETTING in warning and "127.0.0.1:9/nothing" in warning
    with duckdb.connect(str(layout.catalog), read_only=True) as con:  # the views are there, llm_calls typed
        assert con.sql("SELECT count(*), count(cost) FROM llm_calls").fetchall() == [(0, 0)]


def test_calls_recorded_before_the_database_stay_in_the_view(
    postgres_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = HomeLayout.of(tmp_path / "home")
    monkeypatch.delenv(SETTING, raising=False)
    call_ledger(layout).append(CallRecord("triage", "m", "ok", "o/r#1", cost=0.5))  # before the setting: JSONL
    monkeypatch.setenv(SETTING, postgres_db)
    call_ledger(layout).append(CallRecord("triage", "m", "cached", "o/r#1", cache_hit=True))  # after: the table
    sql = 'SELECT outcome, cost FROM llm_calls ORDER BY "at"'
    assert query(layout.lake, sql).to_pylist() == [{"outcome": "ok", "cost": 0.5}, {"outcome": "cached", "cost": None}]
    refresh_catalog(layout.catalog, layout.lake)
    with duckdb.connect(str(layout.catalog), read_only=True) as con:
        assert con.sql(sql).fetchall() == [("ok", 0.5), ("cached", None)]
