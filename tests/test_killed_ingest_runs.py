"""Issue acceptance: `kill -9`ed `swe-forge ingest` runs no longer block the pool for later runs.

Real `swe-forge ingest` processes against a loopback GH Archive twin whose downloads of some
hours hang, so those runs sit inside their `gharchive_download` step holding a pool slot; a
persistent instance under a temporary SWE_FORGE_HOME. Eight such runs fill the pool (limit 8);
a ninth waits, says which runs hold the pool, and stops on Ctrl-C; the eight are killed with
SIGKILL; the next ingest takes its normal time and the killed runs show as FAILURE with the reason.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from swe_forge_dagster.common.dagster_names import GHARCHIVE_DOWNLOAD_POOL
from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.gharchive.hours import archive_file_name, partition_key
from swe_forge_dagster.orchestration.instance import POOL_LIMITS
from swe_forge_dagster.orchestration.processes import identity_fields
from tests.support.gharchive_server import GharchiveServer

POOL = GHARCHIVE_DOWNLOAD_POOL
KILLED = [dt.datetime(2015, 1, 1, h, tzinfo=dt.UTC) for h in range(POOL_LIMITS[POOL])]
BASELINE, WAITER, AFTER = (dt.datetime(2015, 1, 2, h, tzinfo=dt.UTC) for h in range(3))


def runs_of(instance: dg.DagsterInstance, pid: int) -> list[dg.DagsterRun]:
    """The runs whose process identity (`swe_forge/process`) names `pid`."""
    return [run for run in instance.get_runs() if identity_fields(dict(run.tags)).get("pid") == str(pid)]


def ingest(hour: dt.datetime, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "swe_forge_dagster.cli", "ingest", partition_key(hour)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def timed_ingest(hour: dt.datetime, env: dict[str, str], log: Path) -> float:
    started = time.monotonic()
    proc = ingest(hour, env, log)
    try:
        assert proc.wait(timeout=180) == 0, log.read_text()[-3000:]
    finally:
        os.killpg(proc.pid, signal.SIGKILL) if proc.poll() is None else None
    assert "hours materialized: gharchive_pr_events 1/1" in log.read_text()
    return time.monotonic() - started


def wait_for(condition: object, what: str, seconds: float, state: object = str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what} {state()}"  # type: ignore[operator]
        time.sleep(0.2)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A fresh SWE_FORGE_HOME; bytecode cached outside the tree, so that eleven processes compile Dagster once."""
    skip = ("SWE_FORGE_", "DAGSTER_", "PYTHONDONTWRITEBYTECODE")
    base = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    base.update(
        SWE_FORGE_HOME=str(tmp_path / "home"),
        SWE_FORGE_START_DATE="2015-01-01",
        COLUMNS="400",
        NO_COLOR="1",
        PYTHONPYCACHEPREFIX=str(tmp_path / "pycache"),
    )
    return base


@pytest.mark.extended
def test_eight_killed_ingest_runs_do_not_block_the_next(tmp_path: Path, env: dict[str, str]) -> None:
    mirror = tmp_path / "mirror"
    for hour in [*KILLED, BASELINE, WAITER, AFTER]:
        write_hour(mirror, hour, events=400, seed=3)
    logs = tmp_path / "logs"
    logs.mkdir()
    with GharchiveServer(mirror) as server:
        env["SWE_FORGE_GHARCHIVE_URL"] = server.url
        for hour in KILLED:  # their downloads hang: the runs stay in the step, holding a slot
            server.delay(archive_file_name(hour), 600, "GET")
        # Untimed: `swe-forge setup` creates the instance, and the imports are compiled once.
        warm_up = "import swe_forge_dagster.definitions; from swe_forge_dagster.cli.app import app; app(['setup'])"
        warmed = subprocess.run([sys.executable, "-W", "ignore", "-c", warm_up], env=env, capture_output=True)
        assert warmed.returncode == 0, warmed.stderr[-3000:]
        baseline = timed_ingest(BASELINE, env, logs / "baseline.log")

        started = time.monotonic()
        procs = [ingest(hour, env, logs / f"killed-{i}.log") for i, hour in enumerate(KILLED)]
        with dg.DagsterInstance.from_ref(InstanceRef.from_dir(env["SWE_FORGE_HOME"] + "/dagster")) as instance:
            storage = instance.event_log_storage

            def held() -> list[str]:
                return [slot.run_id for slot in storage.get_concurrency_info(POOL).claimed_slots]

            def pool_state() -> str:  # what the failure message shows: who holds, who is queued, assigned or not
                info = storage.get_concurrency_info(POOL)
                queued = [(s.run_id[:8], bool(s.assigned_timestamp)) for s in info.pending_steps]
                return f"(slots held by {[r[:8] for r in held()]}; steps queued (run, assigned): {queued})"

            try:
                # Before slot claims were atomic (`slot_claims`), two of these processes could claim
                # the same slot row: a run then sat in its step holding none, and this waited for ever.
                wait_for(lambda: len(held()) == len(KILLED), "the 8 runs to hold every slot", 120, pool_state)
                wait_for(lambda: all(server.count(archive_file_name(h), "GET") for h in KILLED), "downloads", 60)
                holders = held()
                filled = time.monotonic() - started

                waiter_log = logs / "waiter.log"
                waiter = ingest(WAITER, env, waiter_log)
                wait_for(lambda: "for a slot in pool 'gharchive_download'" in waiter_log.read_text(), "the notice", 180)
                notice = waiter_log.read_text()
                assert "8/8 slots held by run(s)" in notice and all(run[:8] in notice for run in holders)
                os.killpg(waiter.pid, signal.SIGINT)  # Ctrl-C
                assert waiter.wait(timeout=60) == 130, waiter_log.read_text()[-3000:]
            finally:
                for proc in procs:  # kill -9, mid-step
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            waiter_run = runs_of(instance, waiter.pid)[0]
            assert waiter_run.status == dg.DagsterRunStatus.CANCELED
            assert len(held()) == len(KILLED)  # the killed runs still hold the pool...

            after_log = logs / "after.log"
            after = timed_ingest(AFTER, env, after_log)  # ...until the next command sees them dead
            print(f"\nnormal ingest {baseline:.1f}s; pool full after {filled:.1f}s; after the kills {after:.1f}s")
            assert after < 3 * baseline + 15, (baseline, after)  # normal time, with room for a loaded CI machine
            assert held() == []
            for proc in procs:
                (run,) = runs_of(instance, proc.pid)
                assert run.status == dg.DagsterRunStatus.FAILURE
                (failure,) = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
                assert f"the process running this run (pid {proc.pid} on host" in failure.dagster_event.message
                assert f"marked run {run.run_id} (gharchive_job) failed" in after_log.read_text()
