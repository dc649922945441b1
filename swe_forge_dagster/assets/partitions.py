"""Partition definitions shared by assets and sensors.

The hourly key format is Dagster's default (`%Y-%m-%d-%H:%M`) and must never change: it would
orphan every recorded materialization. The first hour comes from the settings' `start_date`
(`SWE_FORGE_START_DATE`): the hourly partitions are built per `Settings`, by `build_hourly_partitions`,
so that `definitions.build_definitions(settings)` follows the settings it is given, not the
environment's at import time. The dynamic partitions depend on no setting and are defined once here.
"""

from __future__ import annotations

import dagster as dg

from swe_forge_dagster.common.dagster_names import AGENT_DIMENSION, AGENT_PARTITIONS, TASK_DIMENSION, TASK_PARTITIONS
from swe_forge_dagster.gharchive.hours import PARTITION_KEY_FORMAT
from swe_forge_dagster.harness.store import agent_key
from swe_forge_dagster.settings import Settings

HOURS_PER_BACKFILL_RUN = 8
"""Hours per run of a backfill of the hourly assets: each hour still its own materialization."""


def build_hourly_partitions(settings: Settings) -> dg.HourlyPartitionsDefinition:
    """The GH Archive hours from `settings.start_date` on, complete hours only (`end_offset=0`)."""
    return dg.HourlyPartitionsDefinition(
        start_date=f"{settings.start_date:%Y-%m-%d}-00:00", fmt=PARTITION_KEY_FORMAT, timezone="UTC", end_offset=0
    )


def hourly_backfill_policy() -> dg.BackfillPolicy:
    """A few hours per backfill run, so that a failed run costs little and hours in one run share their clients."""
    return dg.BackfillPolicy.multi_run(max_partitions_per_run=HOURS_PER_BACKFILL_RUN)


# One partition per task, keyed `owner__repo-123` (no `/`, `,` or `|`); the task sensor adds them.
task_partitions = dg.DynamicPartitionsDefinition(name=TASK_PARTITIONS)


# The agents evaluated, one partition each, keyed by `harness.store.agent_key` of the agent's label (a slug and a
# digest: no `|`, `,`, `[` or `]`); the harness sensor and the launchers add them.
agent_partitions = dg.DynamicPartitionsDefinition(name=AGENT_PARTITIONS)
# `eval_result`: one partition per (agent, task), so that every agent's latest verdict on a task is its own.
eval_partitions = dg.MultiPartitionsDefinition({AGENT_DIMENSION: agent_partitions, TASK_DIMENSION: task_partitions})


def eval_key(agent: str, task_id: str) -> dg.MultiPartitionKey:
    """The `eval_result` partition of the agent labelled `agent` (its `agent_key`) on `task_id`."""
    return dg.MultiPartitionKey({AGENT_DIMENSION: agent_key(agent), TASK_DIMENSION: task_id})
