"""What an asset's step is given from its kind of work, in one place: its stage, its pool and its Celery queue.

Every asset with a stage or a pool takes its `pool` and `op_tags` from `step_options`, so a step's queue on worker
hosts (`orchestration.celery_hosts.queue_of`, read by dagster-celery from the `dagster-celery/queue` op tag) is
always the one of its pool, never a list of op names kept apart. Without a broker the queue tag is a mere tag.
"""

from __future__ import annotations

from typing import Any

from swe_forge_dagster.common.dagster_names import STAGE_TAG
from swe_forge_dagster.orchestration.celery_hosts import queue_tags


def step_options(stage: str, pool: str | None = None) -> dict[str, Any]:
    """`@dg.asset` keyword arguments: `pool` (the limit across runs), and `op_tags` with the stage (the executor's
    limit within a run) and the queue of the pool's kind of work (none without a pool: dagster-celery's default)."""
    return {"pool": pool, "op_tags": {STAGE_TAG: stage, **queue_tags(pool)}}
