"""`gharchive_pr_events` through real Dagster machinery: runs, ranges, failures, backfills."""

from __future__ import annotations

import datetime as dt
import logging
import time
from pathlib import Path

import dagster as dg
import pytest

from swe_forge_dagster.common.dagster_names import (
    AGENT_PARTITIONS,
    CANDIDATES_STAGE,
    DOCKER_HARNESS_POOL,
    DUCKDB_CATALOG_POOL,
    GHARCHIVE_DOWNLOAD_POOL,
    GHARCHIVE_JOB,
    GHARCHIVE_STAGE,
    GITHUB_API_POOL,
    GITHUB_STAGE,
    HOURLY_PIPELINE_JOB,
    LLM_API_POOL,
    LLM_STAGE,
    STAGE_TAG,
    TASK_BUILD_POOL,
    TASK_JOB,
    TASK_PARTITIONS,
    TASKS_STAGE,
)
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.orchestration.launcher import contiguous_blocks, hour_range, materialize_hours
from swe_forge_dagster.wiring.catalog import query
from tests.support.common import SettingsFactory, hour

ASSET = dg.AssetKey("gharchive_pr_events")


def materializations(instance: dg.DagsterInstance) -> dict[str, dict]:
    """Latest materialization metadata per partition."""
    records = instance.fetch_materializations(ASSET, limit=1000).records
    latest: dict[str, dict] = {}
    for record in sorted(records, key=lambda r: r.storage_id):
        mat = record.asset_materialization
        assert mat is not None
        latest[mat.partition] = {k: v.value for k, v in mat.metadata.items()}
    return latest


def count_rows(lake: Path) -> dict[str, int]:
    rows = query(
        lake,
        "SELECT strftime(dt, '%Y-%m-%d') || '-' || lpad(hour::VARCHAR, 2, '0') AS h, count(*) AS n "
        "FROM gharchive_pr_events GROUP BY 1",
    ).to_pylist()
    return {r["h"]: r["n"] for r in rows}


def test_real_hour_materializes_with_metadata(
    gharchive_2015: Path, settings_for: SettingsFactory, instance: dg.DagsterInstance
) -> None:
    settings = settings_for(f"file://{gharchive_2015}")
    job = build_definitions(settings).resolve_job_def(GHARCHIVE_JOB)
    result = job.execute_in_process(partition_key="2015-01-01-00:00", instance=instance)
    assert result.success
    meta = materializations(instance)["2015-01-01-00:00"]
    assert meta["events_read"] == 7702
    assert meta["pr_events"] == 315 and meta["dagster/row_count"] == 315
    assert meta["pr_events_by_action"] == {"closed": 151, "opened": 163, "reopened": 1}
    assert meta["merged"] == 126
    assert meta["bytes_downloaded"] == (gharchive_2015 / "2015-01-01-0.json.gz").stat().st_size
    assert meta["seconds"] > 0 and meta["bad_lines"] == 0
    assert count_rows(settings.lake_dir) == {"2015-01-01-00": 315}


def test_rematerialization_does_not_duplicate(
    gharchive_2015: Path, settings_for: SettingsFactory, instance: dg.DagsterInstance
) -> None:
    settings = settings_for(f"file://{gharchive_2015}")
    job = build_definitions(settings).resolve_job_def(GHARCHIVE_JOB)
    for _ in range(2):
        assert job.execute_in_process(partition_key="2015-01-01-01:00", instance=instance).success
    assert count_rows(settings.lake_dir) == {"2015-01-01-01": 293}


def test_range_run_records_each_hour_with_its_own_metadata(
    gharchive_2015: Path, settings_for: SettingsFactory, instance: dg.DagsterInstance
) -> None:
    settings = settings_for(f"file://{gharchive_2015}")
    outcomes = materialize_hours(build_definitions(settings), instance, ["2015-01-01-00:00", "2015-01-01-01:00"])
    assert len(outcomes) == 1 and outcomes[0].success  # one run for the contiguous range
    meta = materializations(instance)
    assert {k: v["pr_events"] for k, v in meta.items()} == {"2015-01-01-00:00": 315, "2015-01-01-01:00": 293}
    assert meta["2015-01-01-01:00"]["events_read"] == 7427


def test_missing_hour_fails_alone_and_keeps_the_others(
    tmp_path: Path, settings_for: SettingsFactory, instance: dg.DagsterInstance
) -> None:
    mirror = tmp_path / "mirror"
    for key in ("2015-03-01-00:00", "2015-03-01-02:00"):
        write_hour(mirror, hour(key), events=500)
    settings = settings_for(f"file://{mirror}")
    (outcome,) = materialize_hours(
        build_definitions(settings), instance, hour_range("2015-03-01-00:00", "2015-03-01-02:00")
    )
    assert not outcome.success
    assert outcome.materialized == ["2015-03-01-00:00", "2015-03-01-02:00"]
    assert any("2015-03-01-01:00" in e and "not in the mirror" in e for e in outcome.errors)
    failed = instance.get_asset_records([ASSET])  # the hours that landed are recorded as materialized
    assert failed and set(materializations(instance)) == {"2015-03-01-00:00", "2015-03-01-02:00"}


def test_corrupt_hour_fails_with_a_clear_message(
    tmp_path: Path, settings_for: SettingsFactory, instance: dg.DagsterInstance
) -> None:
    mirror = tmp_path / "mirror"
    path, _ = write_hour(mirror, hour("2015-03-02-00:00"), events=2000)
    path.write_bytes(path.read_bytes()[:-2000])
    (outcome,) = materialize_hours(build_definitions(settings_for(f"file://{mirror}")), instance, ["2015-03-02-00:00"])
    assert not outcome.success and outcome.materialized == []
    assert any("truncated" in e for e in outcome.errors)


def test_invalid_partition_keys_are_refused(settings_for: SettingsFactory, instance: dg.DagsterInstance) -> None:
    defs = build_definitions(settings_for("file:///nowhere"))
    with pytest.raises(ValueError, match="YYYY-MM-DD-HH:00"):
        materialize_hours(defs, instance, ["2015-01-01 00:00"])
    with pytest.raises(ValueError, match="not hours of this deployment"):
        materialize_hours(defs, instance, ["2014-12-31-23:00"])
    future = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=3)).strftime("%Y-%m-%d-%H:00")
    with pytest.raises(ValueError, match="has ended"):
        materialize_hours(defs, instance, [future])


def test_contiguous_blocks() -> None:
    keys = [*hour_range("2015-01-01-00:00", "2015-01-01-04:00"), "2015-01-01-09:00", "2015-01-01-00:00"]
    assert contiguous_blocks(keys, 3) == [
        ["2015-01-01-00:00", "2015-01-01-01:00", "2015-01-01-02:00"],
        ["2015-01-01-03:00", "2015-01-01-04:00"],
        ["2015-01-01-09:00"],
    ]


def test_asset_spec_snapshot() -> None:
    """The public contract of the asset: partitions, pool, stage tag, backfill chunking."""
    defs = build_definitions()
    asset = defs.resolve_assets_def("gharchive_pr_events")
    node = asset.node_def
    partitions = asset.partitions_def
    assert isinstance(partitions, dg.HourlyPartitionsDefinition)
    assert partitions.get_first_partition_key() == "2015-01-01-00:00"
    assert partitions.fmt == "%Y-%m-%d-%H:%M"
    assert node.pool == GHARCHIVE_DOWNLOAD_POOL
    assert node.tags[STAGE_TAG] == GHARCHIVE_STAGE
    assert asset.backfill_policy == dg.BackfillPolicy.multi_run(max_partitions_per_run=8)
    catalog = defs.resolve_assets_def("catalog")
    assert catalog.node_def.pool == DUCKDB_CATALOG_POOL
    enriched = defs.resolve_assets_def("enriched_prs")
    assert enriched.node_def.pool == GITHUB_API_POOL and enriched.node_def.tags[STAGE_TAG] == GITHUB_STAGE
    assert enriched.partitions_def == partitions and enriched.backfill_policy == asset.backfill_policy
    candidates = defs.resolve_assets_def("pr_candidates")
    assert candidates.node_def.tags[STAGE_TAG] == CANDIDATES_STAGE and candidates.partitions_def == partitions
    graph = defs.resolve_asset_graph()
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} == {
        "gharchive_pr_events",
        "pr_candidates",
        "enriched_prs",
        "classified_prs",
        "catalog",
        "task_patch",
        "task_environment",
        "task_tests",
        "task_validation",
        "task_quality",
        "swe_task",
        "swe_dataset",
        "eval_result",
        "eval_summary",
    }
    harness = defs.resolve_assets_def("eval_result")
    assert harness.node_def.pool == DOCKER_HARNESS_POOL and harness.partitions_def == dg.MultiPartitionsDefinition(
        {
            "agent": dg.DynamicPartitionsDefinition(name=AGENT_PARTITIONS),
            "task": dg.DynamicPartitionsDefinition(name=TASK_PARTITIONS),
        }
    )  # every agent's latest verdict on a task is its own partition
    assert [c.name for c in harness.check_specs] == ["harness_ok"]
    assert defs.resolve_sensor_def("harness_sensor").default_status == dg.DefaultSensorStatus.STOPPED
    assert defs.resolve_sensor_def("gharchive_mining_sensor").default_status == dg.DefaultSensorStatus.STOPPED
    # Task stages: one dynamic partition per task, Docker stages share pool task_build, the LLM judge llm_api.
    stages = ["task_patch", "task_environment", "task_tests", "task_validation", "task_quality", "swe_task"]
    for name in stages:
        stage = defs.resolve_assets_def(name)
        assert stage.partitions_def == dg.DynamicPartitionsDefinition(name=TASK_PARTITIONS), name
        assert stage.node_def.tags[STAGE_TAG] == TASKS_STAGE
        (outcome,) = stage.check_specs  # each stage answers with its partitioned `accepted` check
        assert outcome.name == "accepted" and outcome.partitions_def == stage.partitions_def, name
    assert {defs.resolve_assets_def(n).node_def.pool for n in stages[:4]} == {TASK_BUILD_POOL}
    assert defs.resolve_assets_def("task_quality").node_def.pool == LLM_API_POOL
    patch_deps = graph.get(dg.AssetKey("task_patch")).parent_keys
    assert patch_deps == {dg.AssetKey("classified_prs")}  # lineage only, with an explicit All mapping
    assert defs.resolve_assets_def("swe_dataset").partitions_def is None
    assert defs.resolve_sensor_def("task_sensor").default_status == dg.DefaultSensorStatus.STOPPED
    assert set(defs.resolve_job_def(TASK_JOB).asset_layer.executable_asset_keys) >= {dg.AssetKey(n) for n in stages}
    triage = defs.resolve_assets_def("classified_prs")
    assert triage.node_def.pool == LLM_API_POOL and triage.node_def.tags[STAGE_TAG] == LLM_STAGE
    assert graph.get(dg.AssetKey("classified_prs")).parent_keys == {dg.AssetKey("enriched_prs")}
    assert graph.get(dg.AssetKey("enriched_prs")).parent_keys == {dg.AssetKey("pr_candidates")}
    assert graph.get(dg.AssetKey("pr_candidates")).parent_keys == {ASSET}


def test_the_hourly_partitions_follow_the_settings_given(settings_for: SettingsFactory) -> None:
    """`build_definitions(settings)` partitions by the settings it is given, not the environment's at import."""
    settings = settings_for("file:///nowhere")
    later = settings.model_copy(update={"start_date": dt.date(2020, 6, 1)})
    first, second = build_definitions(settings), build_definitions(later)
    hourly = ["gharchive_pr_events", "pr_candidates", "enriched_prs", "classified_prs"]
    for defs, key in ((first, "2015-01-01-00:00"), (second, "2020-06-01-00:00")):
        for name in hourly:
            assert defs.resolve_assets_def(name).partitions_def.get_first_partition_key() == key, name
        (check,) = [spec for c in defs.asset_checks or [] for spec in c.check_specs if spec.asset_key == ASSET]
        assert check.partitions_def.get_first_partition_key() == key
        assert defs.resolve_job_def(HOURLY_PIPELINE_JOB).partitions_def.get_first_partition_key() == key


def test_backfill_through_the_daemon_runs_a_few_multi_hour_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 10-hour backfill submitted as the UI does, executed by the backfill daemon's own code.

    Uses Dagster internals (no public backfill API): may need care on a Dagster upgrade.
    """
    from dagster._core.execution.backfill import PartitionBackfill
    from dagster._core.test_utils import create_test_daemon_workspace_context
    from dagster._core.workspace.load_target import ModuleTarget
    from dagster._daemon.backfill import execute_backfill_iteration

    from swe_forge_dagster.settings import get_settings

    mirror = tmp_path / "mirror"
    keys = hour_range("2015-02-01-00:00", "2015-02-01-09:00")
    for key in keys:
        write_hour(mirror, hour(key), events=300)
    monkeypatch.setenv("SWE_FORGE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SWE_FORGE_GHARCHIVE_URL", f"file://{mirror}")
    get_settings.cache_clear()
    target = ModuleTarget(
        module_name="swe_forge_dagster.definitions", attribute=None, working_directory=None, location_name="swe_forge"
    )
    with (
        dg.instance_for_test(synchronous_run_coordinator=True, synchronous_run_launcher=True) as instance,
        create_test_daemon_workspace_context(target, instance) as workspace,
    ):
        instance.add_backfill(
            PartitionBackfill.from_asset_partitions(
                backfill_id="bf1",
                asset_graph=workspace.create_request_context().asset_graph,
                partition_names=keys,
                asset_selection=[ASSET],
                backfill_timestamp=time.time(),
                tags={},
                dynamic_partitions_store=instance,
                all_partitions=False,
                title=None,
                description=None,
                run_config=None,
            )
        )
        for _ in range(6):
            list(execute_backfill_iteration(workspace, logging.getLogger("test-backfill")))
        runs = instance.get_runs(filters=dg.RunsFilter(tags={"dagster/backfill": "bf1"}))
        assert len(runs) == 2  # 10 hours, 8 per run
        assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs)
        assert set(materializations(instance)) == set(keys)
    get_settings.cache_clear()
    assert sum(count_rows(tmp_path / "home" / "lake").values()) > 0


def test_an_unpublished_hour_is_left_out_so_the_others_run_every_stage(
    tmp_path: Path, settings_for: SettingsFactory, instance: dg.DagsterInstance
) -> None:
    """Review finding: a missing hour failed its run's ingest step and skipped every stage downstream."""
    from swe_forge_dagster.gharchive.download import ArchiveFetcher

    mirror = tmp_path / "mirror"
    for key in ("2015-03-03-00:00", "2015-03-03-01:00"):
        write_hour(mirror, hour(key), events=300)
    settings = settings_for(f"file://{mirror}")
    keys = hour_range("2015-03-03-00:00", "2015-03-03-02:00")
    fetcher = ArchiveFetcher(settings.gharchive_url, settings.cache_dir)
    missing, ran = materialize_hours(
        build_definitions(settings), instance, keys, job_name=GHARCHIVE_JOB, is_published=fetcher.is_published
    )
    assert missing.keys == ["2015-03-03-02:00"] and not missing.success and "not published" in missing.errors[0]
    assert ran.success and ran.by_asset == {"gharchive_pr_events": ["2015-03-03-00:00", "2015-03-03-01:00"]}
