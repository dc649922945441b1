"""Eval results as Arrow rows: the `eval_results` dataset, one row per (run, task).

The per-task asset writes one row per task partition (Parquet under the lake) and the
`eval_results` view reads them all; so the schema is fixed here, next to the result it encodes,
and every column is typed (no JSON strings): SQL can count `status`, average
`agent_duration_secs` or unnest the per-check structs directly. `model_patch` is the agent's diff
as it was applied (the SWE-bench predictions' column name), so a run can be re-verified later.

There is deliberately no `task` column: the lake's hive partition folder is `task=<key>`, and a
file column of the same name would clash with it in DuckDB's `hive_partitioning`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from swe_forge_dagster.harness.models import CheckResult, TaskResult
from swe_forge_dagster.lake.dataset import Dataset

EVAL_RESULTS = "eval_results"

CHECK_TYPE = pa.struct(
    [
        pa.field("command", pa.string()),
        pa.field("test_id", pa.string()),
        pa.field("exit_code", pa.int32()),
        pa.field("passed", pa.bool_()),
        pa.field("outcome", pa.string()),
        pa.field("duration_ms", pa.int64()),
    ]
)

EVAL_RESULTS_SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string()),
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("repo", pa.string()),
        pa.field("agent", pa.string()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("reason", pa.string()),
        pa.field("resolved", pa.bool_(), nullable=False),
        pa.field("sanity_check", pa.bool_()),
        pa.field("agent_exit_code", pa.int32()),
        pa.field("agent_duration_secs", pa.float64()),
        pa.field("test_duration_secs", pa.float64()),
        pa.field("total_duration_secs", pa.float64()),
        pa.field("fail_to_pass_passed", pa.int32()),
        pa.field("fail_to_pass_total", pa.int32()),
        pa.field("pass_to_pass_passed", pa.int32()),
        pa.field("pass_to_pass_total", pa.int32()),
        pa.field("fail_to_pass", pa.list_(CHECK_TYPE)),
        pa.field("pass_to_pass", pa.list_(CHECK_TYPE)),
        pa.field("model_patch", pa.string()),
        pa.field("dropped_paths", pa.list_(pa.string())),
        pa.field("review", pa.list_(pa.string())),
        pa.field("unjudged", pa.list_(pa.string())),
        pa.field("image", pa.string()),
        pa.field("started_at", pa.timestamp("us", tz="UTC")),
        pa.field("finished_at", pa.timestamp("us", tz="UTC")),
    ]
)
"""The `eval_results` dataset: one row per evaluated task."""

EVAL_RESULTS_DATASET = Dataset(
    name=EVAL_RESULTS, schema=EVAL_RESULTS_SCHEMA, hive_types={"agent_key": "VARCHAR", "task": "VARCHAR"}
)
"""One file per (agent, task): the latest evaluation of each task by each agent (`harness.store` writes it)."""


def _check(check: CheckResult) -> dict[str, Any]:
    return {
        "command": check.command,
        "test_id": check.test_id,
        "exit_code": check.exit_code,
        "passed": check.passed,
        "outcome": check.outcome,
        "duration_ms": check.duration_ms,
    }


def result_row(result: TaskResult, *, run_id: str | None = None, agent: str | None = None) -> dict[str, Any]:
    """One task's result as a row of `EVAL_RESULTS_SCHEMA` (a dict keyed by column name)."""
    return {
        "run_id": run_id,
        "task_id": result.task_id,
        "repo": result.repo or None,
        "agent": agent,
        "status": result.status.value,
        "reason": result.reason,
        "resolved": result.status.value == "resolved",
        "sanity_check": result.sanity_check,
        "agent_exit_code": result.agent_exit_code,
        "agent_duration_secs": result.agent_duration_secs,
        "test_duration_secs": result.test_duration_secs,
        "total_duration_secs": result.total_duration_secs,
        "fail_to_pass_passed": sum(c.passed for c in result.fail_to_pass),
        "fail_to_pass_total": len(result.fail_to_pass),
        "pass_to_pass_passed": sum(c.passed for c in result.pass_to_pass),
        "pass_to_pass_total": len(result.pass_to_pass),
        "fail_to_pass": [_check(c) for c in result.fail_to_pass],
        "pass_to_pass": [_check(c) for c in result.pass_to_pass],
        "model_patch": result.model_patch,
        "dropped_paths": list(result.dropped_paths),
        "review": list(result.review),
        "unjudged": list(result.unjudged),
        "image": result.image,
        "started_at": result.started_at,
        "finished_at": result.finished_at,
    }


def results_table(results: Iterable[TaskResult], *, run_id: str | None = None, agent: str | None = None) -> pa.Table:
    """Rows of `results` as a table with exactly `EVAL_RESULTS_SCHEMA`."""
    rows = [result_row(result, run_id=run_id, agent=agent) for result in results]
    return pa.Table.from_pylist(rows, schema=EVAL_RESULTS_SCHEMA)
