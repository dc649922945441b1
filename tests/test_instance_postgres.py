"""The Dagster instance on a real Postgres (Debian's, on 127.0.0.1): what `SWE_FORGE_POSTGRES_URL` switches.

`swe-forge` writes a dagster.yaml that names the variable, and the instance it loads keeps runs, events
and pool limits in that database, with the URL in the libpq form users write (the locked SQLAlchemy
would read it as psycopg 3, which is not installed: `orchestration.postgres_storage`). A second
"machine" (another SWE_FORGE_HOME, the same database) sees the first one's runs and limits.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from swe_forge_dagster.common.postgres_url import libpq_url
from swe_forge_dagster.orchestration.instance import POOL_LIMITS


def _env(home: Path, url: str, gharchive: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_"))}
    env.update(
        SWE_FORGE_HOME=str(home),
        SWE_FORGE_START_DATE="2015-01-01",
        SWE_FORGE_POSTGRES_URL=url,
        SWE_FORGE_GHARCHIVE_URL=f"file://{gharchive}",
        COLUMNS="200",
    )
    return env


def test_an_in_process_run_is_recorded_in_postgres_and_seen_from_another_home(
    postgres_db: str, gharchive_2015: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = libpq_url(postgres_db)  # the form psql takes: what users write
    cli = [sys.executable, "-m", "swe_forge_dagster.cli"]
    first = subprocess.run(
        [*cli, "ingest", "2015-01-01-00:00"],
        env=_env(tmp_path / "a", url, gharchive_2015),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert first.returncode == 0, first.stderr[-3000:]
    written = (tmp_path / "a" / "dagster" / "dagster.yaml").read_text()
    assert "SWE_FORGE_POSTGRES_URL" in written and url not in written
    assert not (tmp_path / "a" / "dagster" / "storage" / "runs.db").exists()  # no SQLite run storage

    # Another machine: its own home, the same database. `swe-forge setup` opens the shared instance.
    second = subprocess.run(
        [*cli, "setup"], env=_env(tmp_path / "b", url, gharchive_2015), capture_output=True, text=True, timeout=300
    )
    assert second.returncode == 0, second.stderr[-3000:]
    monkeypatch.setenv("SWE_FORGE_POSTGRES_URL", url)
    with dg.DagsterInstance.from_config(str(tmp_path / "b" / "dagster")) as instance:
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        (run,) = instance.get_run_records()
        assert run.dagster_run.status == dg.DagsterRunStatus.SUCCESS
        assert run.dagster_run.tags["dagster/asset_partition_range_start"] == "2015-01-01-00:00"
        for pool, limit in POOL_LIMITS.items():
            assert instance.event_log_storage.get_concurrency_info(pool).slot_count == limit
    import psycopg2

    with contextlib.closing(psycopg2.connect(url)) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION'")
        assert cursor.fetchone() == (1,)


def test_a_url_the_storage_cannot_use_is_an_error_naming_the_setting(tmp_path: Path) -> None:
    env = _env(tmp_path / "home", "mysql://u:pw@127.0.0.1/db", tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "swe_forge_dagster.cli", "setup"], env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 2 and "SWE_FORGE_POSTGRES_URL" in result.stderr and "pw" not in result.stderr
    assert "Traceback" not in result.stderr
