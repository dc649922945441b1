"""The hourly mining sensor through the real sensor daemon: the sensor runs in a code server
(tests/support/mining_sensor_target.py), is ticked by the daemon's own loop against a loopback GH
Archive twin under a file-controlled clock, and launches each published hour exactly once, even
when an operator moves its cursor back. It uses Dagster's internal APIs, so it may need updating on
a Dagster upgrade.
"""

import logging
import time
from pathlib import Path

import dagster as dg
import pytest

from swe_forge_dagster.common.dagster_names import HOURLY_PIPELINE_JOB
from tests.support.common import REPO_ROOT
from tests.support.mining_sensor import (
    Archive,
    at,
    key,
)


def test_the_daemon_launches_each_hour_once_even_when_the_cursor_is_moved_back(
    archive: Archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sensor in a code server, ticked by the daemon's own loop; runs stay queued (no run daemon)."""
    from dagster._core.scheduler.instigation import SensorInstigatorData
    from dagster._core.test_utils import create_test_daemon_workspace_context, load_remote_repo
    from dagster._core.workspace.load_target import ModuleTarget
    from dagster._daemon.sensor import execute_sensor_iteration

    clock_file = tmp_path / "clock"
    clock_file.write_text(at(6, 10).isoformat())
    monkeypatch.setenv("SWE_FORGE_TEST_CLOCK_FILE", str(clock_file))
    monkeypatch.setenv("SWE_FORGE_GHARCHIVE_URL", archive.server.url)
    monkeypatch.setenv("SWE_FORGE_HOME", str(tmp_path / "home"))
    archive.publish_range(at(0), at(5))
    target = ModuleTarget(
        module_name="tests.support.mining_sensor_target",
        attribute="defs",
        working_directory=str(REPO_ROOT),
        location_name="mining_test",
    )
    queued = {"run_coordinator": {"module": "dagster._core.run_coordinator", "class": "QueuedRunCoordinator"}}
    with (
        dg.instance_for_test(overrides=queued) as instance,
        create_test_daemon_workspace_context(target, instance) as workspace,
    ):
        sensor = load_remote_repo(workspace, "__repository__").get_sensor("gharchive_mining_sensor")

        def tick() -> None:
            time.sleep(1.05)  # the sensor's minimum interval (1 s; 0 would mean the 30 s default)
            list(execute_sensor_iteration(workspace, logging.getLogger("mining-test"), None, None))

        def launched() -> list[str]:
            return [run.tags["dagster/partition"] for run in reversed(instance.get_runs())]

        def cursor() -> str | None:
            state = instance.get_instigator_state(sensor.get_remote_origin_id(), sensor.selector_id)
            return state.instigator_data.cursor if state else None

        tick()
        tick()
        assert launched() == [key(h) for h in range(6)] and cursor() == key(5)

        # An operator moves the cursor back to 01:00: the sensor asks again, the daemon runs nothing twice.
        state = instance.get_instigator_state(sensor.get_remote_origin_id(), sensor.selector_id)
        data = state.instigator_data
        instance.update_instigator_state(
            state.with_data(
                SensorInstigatorData(
                    last_tick_timestamp=data.last_tick_timestamp,
                    last_run_key=data.last_run_key,
                    min_interval=sensor.min_interval_seconds,
                    cursor=key(1),
                    sensor_type=sensor.sensor_type,
                )
            )
        )
        tick()
        tick()
        assert launched() == [key(h) for h in range(6)] and cursor() == key(5)

        archive.publish(at(6))
        clock_file.write_text(at(7, 5).isoformat())
        tick()
        runs = list(reversed(instance.get_runs()))
        assert [run.tags["dagster/partition"] for run in runs] == [key(h) for h in range(7)]
        assert all(run.job_name == HOURLY_PIPELINE_JOB for run in runs)
        assert all(run.tags["dagster/sensor_name"] == "gharchive_mining_sensor" for run in runs)
        assert len({run.tags["dagster/run_key"] for run in runs}) == 7
