"""The `tasks` dataset: one row per task partition with where it stands and why.

Written after every stage (one Parquet file per task, `lake/tasks/task=<id>/part-0.parquet`,
replaced atomically), so `SELECT status, reason FROM tasks` always shows the latest state:
`building` while stages remain, `accepted` once exported, `rejected` with the stage and reason,
or `error` with the failing stage's message (retry that stage from the UI).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa

from swe_forge_dagster.common.store import StorePath, read_parquet
from swe_forge_dagster.lake.writer import write_partition
from swe_forge_dagster.tasks.stage_declaration import FINAL, STAGES
from swe_forge_dagster.tasks.work import TaskWork, split_task_id

TASKS = "tasks"
TASKS_SCHEMA = pa.schema(
    [
        ("task_id", pa.string()),
        ("repo", pa.string()),
        ("number", pa.int64()),
        ("status", pa.string()),
        ("stage", pa.string()),
        ("reason", pa.string()),
        ("difficulty", pa.string()),
        ("difficulty_score", pa.float64()),
        ("quality_score", pa.float64()),
        ("quality_passed", pa.bool_()),
        ("base_commit", pa.string()),
        ("statement_source", pa.string()),
        ("test_source", pa.string()),
        ("recipe_source", pa.string()),
        ("image", pa.string()),
        ("fail_to_pass", pa.list_(pa.string())),
        ("pass_to_pass", pa.list_(pa.string())),
        ("validation_seconds", pa.float64()),
        ("task_dir", pa.string()),
        ("updated_at", pa.timestamp("us", tz="UTC")),
    ]
)


def status_row(work: TaskWork) -> dict[str, Any]:
    """The task's row, composed from what its stages saved (each stage's `status_columns`)."""
    repo, number = split_task_id(work.task_id)
    row: dict[str, Any] = dict.fromkeys(TASKS_SCHEMA.names)
    row.update(task_id=work.task_id, repo=repo, number=number, updated_at=dt.datetime.now(dt.UTC))
    pr = work.load_optional("pr") or {}
    row.update(difficulty=pr.get("difficulty"), difficulty_score=pr.get("difficulty_score"))
    saved = {stage.name: work.load_optional(stage.name) for stage in STAGES}
    for stage in STAGES:  # in order: quality's difficulty replaces the PR's
        if data := saved[stage.name]:
            row.update({column: data.get(key) for column, key in stage.status_columns.items()})
    rejected, error = work.rejection(), work.error()
    if rejected is not None:
        row.update(status="rejected", stage=rejected["stage"], reason=rejected["reason"])
    elif error is not None:
        row.update(status="error", stage=error["stage"], reason=error["message"])
    elif saved[FINAL.name]:
        row.update(status="accepted", stage=FINAL.name)
    else:
        row.update(status="building", stage=work.last_stage())
    return row


def write_status(lake_dir: StorePath, work: TaskWork) -> dict[str, Any]:
    row = status_row(work)
    table = pa.Table.from_pylist([row], schema=TASKS_SCHEMA)
    write_partition(table, lake_dir / TASKS / f"task={work.task_id}", TASKS_SCHEMA)
    return row


def read_status(lake_dir: StorePath, task_id: str) -> dict[str, Any] | None:
    """The task's latest row, or None before its first stage ran."""
    path = lake_dir / TASKS / f"task={task_id}" / "part-0.parquet"
    if not path.is_file():
        return None
    rows = read_parquet(path).cast(TASKS_SCHEMA).to_pylist()
    return rows[0] if rows else None
