"""`harness_sensor`: evaluate each newly exported task with the configured agent, once.

Requests one `eval_job` run per accepted task that has no stored result for the configured agent,
for its (agent, task) partition, adding the agent's partition first (run key = agent + task, so a
task is evaluated once per agent however often this ticks). Skips
with a reason when no agent is configured. Stopped by default: an agent costs Docker time and,
for a model-driven agent, money.
"""

import dagster as dg

from swe_forge_dagster.assets.partitions import agent_partitions, eval_key, task_partitions
from swe_forge_dagster.common.dagster_names import EVAL_JOB
from swe_forge_dagster.harness.store import agent_key, has_result
from swe_forge_dagster.resources import LakeResource
from swe_forge_dagster.resources.harness import HarnessResource
from swe_forge_dagster.wiring.catalog import query

PER_TICK = 25


def build_harness_sensor(job_name: str = EVAL_JOB) -> dg.SensorDefinition:
    @dg.sensor(
        name="harness_sensor",
        job_name=job_name,
        minimum_interval_seconds=120,
        default_status=dg.DefaultSensorStatus.STOPPED,
    )
    def harness_sensor(
        context: dg.SensorEvaluationContext, harness: HarnessResource, lake: LakeResource
    ) -> dg.SensorResult | dg.SkipReason:
        if not harness.configured:
            return dg.SkipReason("no agent configured (SWE_FORGE_AGENT / SWE_FORGE_AGENT_DIR)")
        label = harness.label
        accepted = query(lake.lake_dir, "SELECT task_id FROM tasks WHERE status = 'accepted' ORDER BY updated_at")
        todo = [t for t in accepted.column("task_id").to_pylist() if not has_result(lake.lake_dir, label, t)]
        if not todo:
            return dg.SkipReason(f"every exported task has a result for {label}")
        key = agent_key(label)
        return dg.SensorResult(
            run_requests=[
                dg.RunRequest(partition_key=eval_key(label, t), run_key=f"{key}:{t}") for t in todo[:PER_TICK]
            ],
            dynamic_partitions_requests=[  # both dimensions' keys (a lake shared by instances may know more tasks)
                agent_partitions.build_add_request([key]),
                task_partitions.build_add_request(todo[:PER_TICK]),
            ],
        )

    return harness_sensor
