"""A small evaluation matrix without Docker: two agents, an exported task and a rejected one, in a real lake.

The lake gets what the task stages and the harness write (a `tasks` row per task, an `eval_results` row per
verdict: the oracle resolved the exported task, the empty agent did not), and the instance the partitions the
task sensor and the launchers add, so `eval_summary` and `eval_result`'s rejected branch run as they do after a
real demo. What the UI then shows is read through the webserver's GraphQL with the queries below.
"""

from __future__ import annotations

import datetime as dt

import dagster as dg
import pyarrow as pa

from swe_forge_dagster.common.dagster_names import AGENT_PARTITIONS, TASK_PARTITIONS
from swe_forge_dagster.harness.models import Status, TaskResult
from swe_forge_dagster.harness.store import agent_key, write_result
from swe_forge_dagster.lake.writer import write_partition
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.tasks.status import TASKS, TASKS_SCHEMA

EXPORTED = "acme__calc-1"
REJECTED = "acme__calc-2"
REJECTION = ("task_validation", "its tests pass without the fix")
ORACLE = "oracle"
EMPTY = "python -m emptyagent"
AGENTS = (ORACLE, EMPTY)

CHECK_CELLS = """
query($path: [String!]!) { assetNodeOrError(assetKey: {path: $path}) { ... on AssetNode {
  assetChecksOrError { ... on AssetChecks { checks { name partitionStatuses {
    ... on AssetCheckMultiPartitionStatuses { primaryDimensionName ranges { primaryDimStartKey primaryDimEndKey
      secondaryDim { ... on AssetCheckDefaultPartitionStatuses { succeededPartitions failedPartitions } } } }
  } } } } } } }
"""
ASSET_CELLS = """
query($path: [String!]!) { assetNodeOrError(assetKey: {path: $path}) { ... on AssetNode {
  partitionKeysByDimension { name partitionKeys }
  assetPartitionStatuses { ... on MultiPartitionStatuses { primaryDimensionName ranges {
    primaryDimStartKey primaryDimEndKey
    secondaryDim { ... on DefaultPartitionStatuses { materializedPartitions failedPartitions } } } } } } } }
"""


def write_task_row(settings: Settings, task_id: str, status: str, stage: str, reason: str | None) -> None:
    """The task's `tasks` row, as the task stages leave it."""
    row = dict.fromkeys(TASKS_SCHEMA.names)
    row.update(task_id=task_id, status=status, stage=stage, reason=reason, updated_at=dt.datetime.now(dt.UTC))
    table = pa.Table.from_pylist([row], schema=TASKS_SCHEMA)
    write_partition(table, settings.lake_dir / TASKS / f"task={task_id}", TASKS_SCHEMA)


def lay_out_matrix(settings: Settings, instance: dg.DagsterInstance) -> None:
    """The lake and the instance of two agents on one exported and one rejected task (see the module)."""
    write_task_row(settings, EXPORTED, "accepted", "swe_task", None)
    write_task_row(settings, REJECTED, "rejected", *REJECTION)
    verdicts = {ORACLE: Status.RESOLVED, EMPTY: Status.UNRESOLVED}
    for agent, status in verdicts.items():
        result = TaskResult(task_id=EXPORTED, repo="acme/calc", status=status, reason="a check fails")
        write_result(settings.lake_dir, result, agent=agent, run_id=None)
    instance.add_dynamic_partitions(TASK_PARTITIONS, [EXPORTED, REJECTED])
    instance.add_dynamic_partitions(AGENT_PARTITIONS, [agent_key(agent) for agent in AGENTS])


def cells_by_status(ranges: list[dict], agents: list[str], *statuses: str) -> dict[str, set[str]]:
    """`{status: {"agent|task", ...}}` from a multi-partition GraphQL answer, for the given status fields. The agent
    is the primary dimension (two dynamic sets: the first in name order); a range of it (consecutive agents with the
    same statuses) is spread over `agents`, the dimension's keys in order."""
    cells: dict[str, set[str]] = {status: set() for status in statuses}
    for found in ranges:
        first, last = agents.index(found["primaryDimStartKey"]), agents.index(found["primaryDimEndKey"])
        for agent in agents[first : last + 1]:
            for status in statuses:
                cells[status] |= {f"{agent}|{task}" for task in found["secondaryDim"][status]}
    return cells
