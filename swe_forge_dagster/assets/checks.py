"""Asset checks where they protect users, blocking where a bad partition must not flow on.

- `gharchive_pr_events_schema` (blocking): every hour of the run has its Parquet file, readable and
  with exactly the published schema. The downstream stages read those files by column name; a
  file written by another version or damaged by hand must stop them, not feed them NULLs. In a
  multi-hour run the check covers the run's hours at once (Dagster evaluates a check once per run),
  and its metadata names the bad hours.
- `swe_task_has_fail_to_pass` (blocking): an exported task directory reads back and has at least
  one FAIL_TO_PASS test id and a command for each (a rejected task has no directory: it passes,
  `exported: false`; its rejection is the stage's own `accepted` check, `assets.tasks`).
"""

import dagster as dg

from swe_forge_dagster.assets.partitions import task_partitions
from swe_forge_dagster.candidates.datasets import partition_file
from swe_forge_dagster.common.store import read_parquet_schema
from swe_forge_dagster.export.task_dir import TaskDirError, read_task_dir
from swe_forge_dagster.gharchive.schema import PR_EVENTS_SCHEMA
from swe_forge_dagster.resources import LakeResource
from swe_forge_dagster.resources.tasks import TaskBuildResource
from swe_forge_dagster.tasks.stage_declaration import FINAL
from swe_forge_dagster.tasks.status import read_status

EVENTS = "gharchive_pr_events"


def hour_file_problem(lake: LakeResource, key: str) -> str | None:
    path = partition_file(lake.lake_dir, EVENTS, key)
    try:
        schema = read_parquet_schema(path)
    except FileNotFoundError:
        return f"{path} is missing"
    except Exception as exc:  # any unreadable file is the finding, whatever pyarrow raises
        return f"{path} is unreadable: {exc}"
    if not schema.remove_metadata().equals(PR_EVENTS_SCHEMA.remove_metadata()):
        ours, theirs = set(PR_EVENTS_SCHEMA.names), set(schema.names)
        return f"schema differs: missing {sorted(ours - theirs)}, unexpected {sorted(theirs - ours)} (or types)"
    return None


def build_events_schema_check(
    partitions: dg.TimeWindowPartitionsDefinition, events: dg.AssetsDefinition
) -> dg.AssetChecksDefinition:
    """`gharchive_pr_events_schema` on `events` (`gharchive_pr_events`), over its `partitions`."""

    @dg.asset_check(asset=events, blocking=True, partitions_def=partitions)
    def gharchive_pr_events_schema(context: dg.AssetCheckExecutionContext, lake: LakeResource) -> dg.AssetCheckResult:
        """Each hour's Parquet file exists, reads, and has exactly the published schema."""
        problems = {key: why for key in context.partition_keys if (why := hour_file_problem(lake, key))}
        return dg.AssetCheckResult(
            passed=not problems,
            metadata={"hours_checked": len(context.partition_keys), "bad_hours": dg.MetadataValue.json(problems)},
        )

    return gharchive_pr_events_schema


@dg.asset_check(asset=FINAL.asset, blocking=True, partitions_def=task_partitions)
def swe_task_has_fail_to_pass(
    context: dg.AssetCheckExecutionContext, tasks: TaskBuildResource, lake: LakeResource
) -> dg.AssetCheckResult:
    """An exported task reads back with at least one FAIL_TO_PASS id and its runnable commands."""
    row = read_status(lake.lake_dir, context.partition_key) or {}
    if row.get("status") != "accepted":
        return dg.AssetCheckResult(passed=True, metadata={"exported": False, "status": row.get("status")})
    try:
        task = read_task_dir(row["task_dir"])
    except (TaskDirError, ValueError, TypeError) as exc:
        return dg.AssetCheckResult(passed=False, metadata={"problem": f"task directory unreadable: {exc}"})
    ids, commands = task.instance.fail_to_pass_full or task.instance.FAIL_TO_PASS, task.fail_to_pass_commands
    passed = bool(ids) and len(commands) == len(ids)
    return dg.AssetCheckResult(
        passed=passed, metadata={"exported": True, "fail_to_pass": len(ids), "fail_to_pass_commands": len(commands)}
    )


def build_asset_checks(
    partitions: dg.TimeWindowPartitionsDefinition, events: dg.AssetsDefinition
) -> list[dg.AssetChecksDefinition]:
    """Every asset check, the hourly one over `partitions` (the settings' hours)."""
    return [build_events_schema_check(partitions, events), swe_task_has_fail_to_pass]
