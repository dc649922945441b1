"""Partition definitions shared by assets and sensors.

The hourly key format is Dagster's default (`%Y-%m-%d-%H:%M`) and must never change: it would
orphan every recorded materialization. The first hour comes from `SWE_FORGE_START_DATE`.
"""

from __future__ import annotations

import dagster as dg

from swe_forge_dagster.gharchive.hours import PARTITION_KEY_FORMAT
from swe_forge_dagster.harness.store import AGENT_PARTITIONS_NAME, agent_key
from swe_forge_dagster.settings import get_settings


def build_hourly_partitions() -> dg.HourlyPartitionsDefinition:
    start = get_settings().start_date
    return dg.HourlyPartitionsDefinition(
        start_date=f"{start:%Y-%m-%d}-00:00", fmt=PARTITION_KEY_FORMAT, timezone="UTC", end_offset=0
    )


hourly_partitions = build_hourly_partitions()


# One partition per task, keyed `owner__repo-123` (no `/`, `,` or `|`); the task sensor adds them.
TASK_PARTITIONS_NAME = "tasks"
task_partitions = dg.DynamicPartitionsDefinition(name=TASK_PARTITIONS_NAME)


# The agents evaluated, one partition each, keyed by `harness.store.agent_key` of the agent's label (a slug and a
# digest: no `|`, `,`, `[` or `]`); the harness sensor and the launchers add them.
agent_partitions = dg.DynamicPartitionsDefinition(name=AGENT_PARTITIONS_NAME)
# `eval_result`: one partition per (agent, task), so that every agent's latest verdict on a task is its own.
eval_partitions = dg.MultiPartitionsDefinition({"agent": agent_partitions, "task": task_partitions})


def eval_key(agent: str, task_id: str) -> dg.MultiPartitionKey:
    """The `eval_result` partition of the agent labelled `agent` (its `agent_key`) on `task_id`."""
    return dg.MultiPartitionKey({"agent": agent_key(agent), "task": task_id})
