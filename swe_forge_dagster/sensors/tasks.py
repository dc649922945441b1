"""`task_sensor`: a task partition (and its run) for each classified PR of the target difficulty.

Reads `classified_prs` from the lake (oldest hours first), skips PRs that already have a
partition, adds at most `tasks_per_tick` partitions per tick and requests one `task_job` run per
new partition (run_key = task id, so a task is requested once). Stopped by default: task
building spends LLM calls and Docker time, so a user turns it on deliberately (UI → Automation).
"""

import dagster as dg

from swe_forge_dagster.assets.partitions import task_partitions
from swe_forge_dagster.common.dagster_names import TASK_JOB, TASK_PARTITIONS
from swe_forge_dagster.resources import LakeResource, MiningResource
from swe_forge_dagster.tasks.lookup import eligible_task_ids


def build_task_sensor(job_name: str = TASK_JOB) -> dg.SensorDefinition:
    @dg.sensor(
        name="task_sensor",
        job_name=job_name,
        minimum_interval_seconds=60,
        default_status=dg.DefaultSensorStatus.STOPPED,
    )
    def task_sensor(context: dg.SensorEvaluationContext, lake: LakeResource, mining: MiningResource) -> dg.SensorResult:
        existing = set(context.instance.get_dynamic_partitions(TASK_PARTITIONS))
        new, waiting = eligible_task_ids(lake.lake_dir, mining.difficulty, existing, mining.tasks_per_tick)
        if not new:
            return dg.SensorResult(skip_reason=dg.SkipReason("no new classified PR of the target difficulty"))
        context.log.info(f"adding {len(new)} task partitions ({waiting} more wait for the next tick)")
        return dg.SensorResult(
            run_requests=[dg.RunRequest(partition_key=key, run_key=key) for key in new],
            dynamic_partitions_requests=[task_partitions.build_add_request(new)],
        )

    return task_sensor
