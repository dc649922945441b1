"""`deploy/hosts check`: a run whose steps each say which worker host and which Docker engine ran them.

The same path a backfill's steps take (the run's executor puts each step on the broker; a host's Celery worker runs
it in a container of the project image on its own engine), with steps that only look around: the engine they were
started by (its id: every host has its own) and the worker that took them (Dagster's own engine event records it as
"Celery worker"). `python -m swe_forge_dagster.orchestration.host_check [STEPS]` runs it in this process against the
instance of `DAGSTER_HOME` and prints one line per step and a summary as JSON.
"""

import json
import os
import socket
import sys
import time
from collections import Counter

import dagster as dg
import docker
from dagster._core.definitions.reconstruct import ReconstructableJob

from swe_forge_dagster.orchestration.celery_hosts import executor_config, uses_hosts
from swe_forge_dagster.orchestration.deploy import IMAGE_SETTING, step_env_names

STEP_SECONDS = 3.0
"""How long each step holds its worker, so the broker spreads them rather than one host taking all."""


@dg.op(out=dg.Out(dict))
def where_am_i(context: dg.OpExecutionContext) -> dict:
    """The engine this step's container was started by, and this container's host name."""
    time.sleep(STEP_SECONDS)
    engine = docker.from_env().info()
    context.log.info(f"engine {engine['ID']} ({engine['Name']})")
    return {"engine": engine["ID"], "engine_name": engine["Name"], "container": socket.gethostname()}


def _job(steps: int) -> dg.JobDefinition:
    local_root = os.environ.get("SWE_FORGE_LOCAL_ROOT") or os.environ.get("DAGSTER_HOME", "/tmp")
    config = executor_config(os.environ[IMAGE_SETTING], step_env_names(), local_root)
    from dagster_celery_docker.executor import celery_docker_executor

    @dg.job(executor_def=celery_docker_executor.configured(config, name="swe_forge_hosts"))
    def host_check_job() -> None:
        for index in range(steps):
            where_am_i.alias(f"step_{index}")()

    return host_check_job


STEPS = int(os.environ.get("SWE_FORGE_HOST_CHECK_STEPS", "4"))
host_check_job = _job(STEPS) if uses_hosts() and os.environ.get(IMAGE_SETTING) else None
"""Module level, so the step containers load it by its Python origin."""


def workers_of(instance: dg.DagsterInstance, run_id: str) -> dict[str, str]:
    """Step key -> the Celery worker that ran it, from the run's engine events (the last one per step wins: a step
    given back by a dead host and run again shows the host that finished it)."""
    found: dict[str, str] = {}
    for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        event = record.dagster_event
        if event is None or not event.step_key:
            continue
        metadata = event.engine_event_data.metadata if event.engine_event_data else {}
        worker = metadata.get("Celery worker")
        if worker is not None:
            found[event.step_key] = str(worker.value)
    return found


def main() -> int:
    if host_check_job is None:
        print("host_check: set SWE_FORGE_BROKER_URL and SWE_FORGE_IMAGE (deploy/hosts does)", file=sys.stderr)
        return 2
    instance = dg.DagsterInstance.get()
    job = ReconstructableJob.for_module(__spec__.name if __spec__ else __name__, "host_check_job")
    with dg.execute_job(job, instance=instance) as result:
        workers = workers_of(instance, result.run_id)
        engines = {key: result.output_for_node(key)["engine_name"] for key in workers if result.success}
    for key in sorted(workers):
        print(f"{key}: worker {workers[key]}, engine {engines.get(key, '?')}", file=sys.stderr)
    summary = {"run_id": result.run_id, "success": result.success, "steps": workers, "engines": engines}
    summary["per_worker"] = dict(Counter(workers.values()))
    print(json.dumps(summary))
    return 0 if result.success else 1


if __name__ == "__main__":
    raise SystemExit(main())
