"""What `eval_result` and `eval_summary` say when several agents are evaluated (issue 39, item 4).

- `harness_ok`, the partitioned check of `eval_result`, passes for every verdict about an agent, so the UI's
  check grid (which paints a task with no agent selected in the worst status over the agents) shows a task that
  one agent resolved and another did not as passed, not failed; it fails only where the harness could not judge.
- A rejected task's cells of `eval_result` are materialized with `status: rejected` (by `eval_result` itself, or
  for the cells nobody ran by `eval_summary`), so the partition grid does not show them Missing.
- `eval_summary`'s `resolved_rate_by_run` chart labels each run with its own time, to the second.

Real parts: a lake written as the stages write it, a real Dagster instance, the project's definitions and jobs.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from pathlib import Path

import dagster as dg
import pytest

from swe_forge_dagster.assets.harness import HARNESS_OK_CHECK, NOT_EVALUATED, outcome_check
from swe_forge_dagster.assets.partitions import eval_key
from swe_forge_dagster.common.dagster_names import EVAL_JOB
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.harness.models import Status
from swe_forge_dagster.harness.summary_views import REJECTED, run_time_labels, verdict_matrix
from swe_forge_dagster.settings import Settings
from tests.support.eval_matrix import EMPTY, EXPORTED, ORACLE, REJECTION, lay_out_matrix
from tests.support.eval_matrix import REJECTED as REJECTED_TASK

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
OUTCOMES = [
    (Status.RESOLVED.value, True, None),
    (Status.UNRESOLVED.value, True, None),
    (Status.AGENT_ERROR.value, True, None),
    (REJECTED, True, None),
    (Status.SETUP_ERROR.value, False, ERROR),
    (Status.TEST_ERROR.value, False, ERROR),
    (Status.SANITY_FAIL.value, False, WARN),
    (NOT_EVALUATED, False, WARN),
]


@pytest.mark.parametrize(("status", "passed", "severity"), OUTCOMES)
def test_harness_ok_passes_every_verdict_and_fails_only_where_nothing_was_judged(
    status: str, passed: bool, severity: dg.AssetCheckSeverity | None
) -> None:
    check = outcome_check(status, "why")
    assert (check.check_name, check.passed) == (HARNESS_OK_CHECK, passed)
    assert passed or check.severity == severity
    assert check.metadata["status"].value == status  # the verdict itself, whatever the check says
    assert check.metadata["resolved"].value is (status == Status.RESOLVED.value)
    assert check.description == f"{status}: why"


def test_every_harness_status_has_its_outcome() -> None:
    assert {status.value for status in Status} <= {status for status, _, _ in OUTCOMES}


@pytest.fixture
def matrix(tmp_path: Path, instance: dg.DagsterInstance) -> Settings:
    """Two agents' verdicts on an exported task and a rejected one (`tests.support.eval_matrix`)."""
    settings = Settings(SWE_FORGE_HOME=str(tmp_path / "home"))
    lay_out_matrix(settings, instance)
    return settings


def check_evaluation(instance: dg.DagsterInstance, partition: str) -> dg.AssetCheckEvaluation:
    """The latest `harness_ok` evaluation recorded for `partition` of `eval_result`."""
    key = dg.AssetCheckKey(dg.AssetKey("eval_result"), HARNESS_OK_CHECK)
    records = instance.event_log_storage.get_asset_check_execution_history(key, limit=50)
    found = [r.event.dagster_event.event_specific_data for r in records if r.partition == partition and r.event]
    assert found, f"no harness_ok result for {partition}"
    return found[0]


def shown_as_passed(instance: dg.DagsterInstance, partition: str) -> bool:
    """Whether Dagster's check partition grid shows `harness_ok` passed for `partition`: its latest result passed and
    targets the partition's latest materialization (else the grid drops it, as for a re-materialized partition)."""
    from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

    key = dg.AssetCheckKey(dg.AssetKey("eval_result"), HARNESS_OK_CHECK)
    (info,) = [
        i for i in instance.event_log_storage.get_asset_check_partition_info([key]) if i.partition_key == partition
    ]
    return info.is_current and info.latest_execution_status == AssetCheckExecutionRecordStatus.SUCCEEDED


def latest_metadata(instance: dg.DagsterInstance, partition: str) -> dict:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("eval_result"), asset_partitions=[partition]), limit=1
    ).records
    assert records, f"{partition} was never materialized"
    return {label: value.value for label, value in records[0].asset_materialization.metadata.items()}


def test_a_rejected_tasks_cells_read_rejected_for_every_agent(matrix: Settings, instance: dg.DagsterInstance) -> None:
    # The oracle's row, launched on the rejected task (a UI backfill over the matrix does): no Docker, a passed
    # check and a materialization that say why.
    defs = build_definitions(matrix.model_copy(update={"agent": "oracle"}))
    run = defs.resolve_job_def(EVAL_JOB).execute_in_process(
        instance=instance, partition_key=eval_key(ORACLE, REJECTED_TASK)
    )
    (check,) = run.get_asset_check_evaluations()
    assert run.success and check.passed and check.description.startswith(f"{REJECTED}: {REJECTION[0]}")
    assert latest_metadata(instance, str(eval_key(ORACLE, REJECTED_TASK)))["status"] == REJECTED

    # The empty agent never ran on it: eval_summary records the same for its cell, once.
    summary = defs.resolve_assets_def("eval_summary")
    first = dg.materialize([summary], instance=instance).asset_materializations_for_node("eval_summary")[0]
    assert first.metadata["rejected_cells_marked"].value == 1  # the oracle's cell had its own run
    empty_cell = str(eval_key(EMPTY, REJECTED_TASK))
    assert {empty_cell, str(eval_key(ORACLE, REJECTED_TASK))} <= instance.get_materialized_partitions(
        dg.AssetKey("eval_result")
    )
    metadata = latest_metadata(instance, empty_cell)
    assert (metadata["status"], metadata["evaluated"], metadata["recorded_by"]) == (REJECTED, False, "eval_summary")
    recorded = check_evaluation(instance, empty_cell)
    assert recorded.passed and recorded.description.startswith(f"{REJECTED}: {REJECTION[0]}: {REJECTION[1]}")
    assert shown_as_passed(instance, empty_cell) and shown_as_passed(instance, str(eval_key(ORACLE, REJECTED_TASK)))
    assert str(eval_key(EMPTY, EXPORTED)) not in instance.get_materialized_partitions(dg.AssetKey("eval_result"))

    again = dg.materialize([summary], instance=instance).asset_materializations_for_node("eval_summary")[0]
    assert again.metadata["rejected_cells_marked"].value == 0  # nothing recorded twice
    rows = again.metadata["verdicts"].value.splitlines()
    assert rows[0] == f"| task | {ORACLE} | {EMPTY} |"
    assert f"| {EXPORTED} | resolved | unresolved |" in rows  # each agent's verdict, side by side
    assert f"| {REJECTED_TASK} | rejected | rejected |" in rows


def svg_of(markdown: str) -> str:
    match = re.fullmatch(r"!\[[^\]]*\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)", markdown)
    assert match, markdown[:200]
    return base64.b64decode(match.group(1)).decode()


def test_eval_summarys_chart_labels_each_run_with_its_own_time(matrix: Settings, instance: dg.DagsterInstance) -> None:
    """Runs a second or less apart (Dagster's own plots would label all of them with the same minute)."""
    summary = build_definitions(matrix).resolve_assets_def("eval_summary")
    for _ in range(3):
        last = dg.materialize([summary], instance=instance).asset_materializations_for_node("eval_summary")[0]
    assert last.metadata[f"{ORACLE}: resolved_rate"].value == 1.0  # Dagster's plotted series stay
    assert last.metadata[f"{EMPTY}: resolved_rate"].value == 0.0
    svg = svg_of(last.metadata["resolved_rate_by_run"].value)
    labels = re.findall(r'transform="rotate\(-40 [^"]*\)">([^<]*)</text>', svg)
    assert len(labels) == 3 and len(set(labels)) == 3, labels
    assert all(re.fullmatch(r"\d\d:\d\d:\d\d(\.\d{3})?", label) for label in labels), labels
    earlier = instance.fetch_materializations(dg.AssetKey("eval_summary"), limit=3, ascending=True).records[:2]
    times = [dt.datetime.fromtimestamp(record.timestamp, dt.UTC) for record in earlier]
    milliseconds = "." in labels[0]
    assert labels[:2] == [time.strftime("%H:%M:%S.%f")[:-3] if milliseconds else f"{time:%H:%M:%S}" for time in times]
    assert f"run time (UTC, {times[0]:%Y-%m-%d})" in svg
    assert f">{ORACLE}</text>" in svg and f">{EMPTY}</text>" in svg  # one line per agent


def test_run_time_labels_tell_runs_apart() -> None:
    day = dt.datetime(2026, 11, 29, 14, 23, 5, 120_000, tzinfo=dt.UTC)
    apart = [day, day + dt.timedelta(seconds=20), day + dt.timedelta(minutes=3)]
    assert run_time_labels(apart) == (["14:23:05", "14:23:25", "14:26:05"], "run time (UTC, 2026-11-29)")
    same_second = [day, day + dt.timedelta(milliseconds=300)]
    assert run_time_labels(same_second)[0] == ["14:23:05.120", "14:23:05.420"]
    two_days = [day, day + dt.timedelta(days=1)]
    assert run_time_labels(two_days) == (["2026-11-29 14:23:05", "2026-11-30 14:23:05"], "run time (UTC)")
    paris = dt.timezone(dt.timedelta(hours=1))
    assert run_time_labels([day.astimezone(paris)])[0] == ["14:23:05"]  # UTC whatever the zone given


def test_verdict_matrix_names_each_agent_and_what_has_no_result() -> None:
    rows = [
        {"task_id": "a__b-1", "agent": "oracle", "status": "resolved"},
        {"task_id": "a__b-2", "agent": "mine|v2", "status": "agent_error"},
    ]
    table = verdict_matrix(rows, ["a__b-3"]).splitlines()
    assert table[0] == "| task | mine/v2 | oracle |"
    assert table[2:] == [
        "| a__b-1 | — | resolved |",
        "| a__b-2 | agent_error | — |",
        "| a__b-3 | rejected | rejected |",
    ]
    assert verdict_matrix([], []) == "no task has a verdict yet"
    capped = verdict_matrix(rows, ["a__b-3"], limit=2).splitlines()
    assert capped[2:] == [table[2], table[3], "", "1 more tasks: `SELECT task_id, agent, status FROM eval_results`"]
