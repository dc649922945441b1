"""The blocking asset check on each hour's Parquet file, through a real Dagster instance."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from swe_forge_dagster.candidates.datasets import partition_file
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.orchestration.launcher import materialize_hours
from tests.support.common import SettingsFactory, hour

HOURS = ["2015-04-01-00:00", "2015-04-01-01:00"]


def check_run(defs: dg.Definitions, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    job = dg.define_asset_job("events_check", selection=dg.AssetSelection.checks_for_assets("gharchive_pr_events"))
    resolved = dg.Definitions.merge(defs, dg.Definitions(jobs=[job])).resolve_job_def("events_check")
    return resolved.execute_in_process(
        instance=instance,
        raise_on_error=False,
        tags={"dagster/asset_partition_range_start": HOURS[0], "dagster/asset_partition_range_end": HOURS[-1]},
    )


def test_hour_files_are_checked_in_every_run_and_a_damaged_one_fails_the_check(
    tmp_path: Path, settings_for: SettingsFactory, instance: dg.DagsterInstance
) -> None:
    mirror = tmp_path / "mirror"
    for key in HOURS:
        write_hour(mirror, hour(key), events=500)
    settings = settings_for(f"file://{mirror}")
    defs = build_definitions(settings)
    (outcome,) = materialize_hours(defs, instance, HOURS)
    assert outcome.success
    record = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [dg.AssetCheckKey(dg.AssetKey("gharchive_pr_events"), "gharchive_pr_events_schema")]
    )
    (latest,) = record.values()
    assert latest.status.value == "SUCCEEDED"  # the check ran with the ingest and passed

    path = partition_file(settings.lake_dir, "gharchive_pr_events", HOURS[1])
    pq.write_table(pa.table({"event_id": [1], "note": ["written by something else"]}), path)
    result = check_run(defs, instance)
    (evaluation,) = result.get_asset_check_evaluations()
    assert not evaluation.passed
    bad = evaluation.metadata["bad_hours"].value
    assert list(bad) == [HOURS[1]] and "unexpected ['note']" in bad[HOURS[1]]
