"""A step's message delivered a second time never runs the step a second time in its run.

A host's worker acknowledges a step only once it ended (`celery_hosts`: `task_acks_late`), so the broker holds every
step in flight. When the broker restarts (`deploy/hosts restart-broker`), or a worker's connection drops and comes
back, the acknowledgements of steps that ended meanwhile fail ("connection already closed") and RabbitMQ delivers those
messages again: in `benchmarks/host_faults.py` all four steps in flight at a broker restart were delivered again after
they had succeeded. Without a check, each would run its step once more (an environment build, a sandboxed test run)
and write its events into a run that has its results, or has ended.

The run's own record decides, read by the worker before it starts a container (`StepOnce`, the base of
dagster-celery-docker's own `execute_step_docker` task, so the library's task is not copied): a step that succeeded
in this run, or a run that has ended, is not run again, and an engine event in the run says why. A step that failed,
or that started and never ended (its host died), runs: Dagster's step retries and a dead host's steps depend on it.

Open: a message delivered again while its first delivery still runs (its worker lost the broker and kept working)
finds neither, and runs beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import celery
import dagster as dg
from dagster._core.events import EngineEventData
from dagster._grpc.types import ExecuteStepArgs
from dagster_celery_docker.executor import CeleryDockerExecutor
from dagster_shared.serdes import serialize_value, unpack_value


def already_done(instance: dg.DagsterInstance, run_id: str, step_keys: Sequence[str]) -> str | None:
    """Why running `step_keys` in run `run_id` again would repeat work (None: it would not)."""
    run = instance.get_run_by_id(run_id)
    if run is None:
        return None  # the library's task says so in its own words
    if run.is_finished:
        return f"run {run_id} already ended ({run.status.value})"
    succeeded = {event.step_key for event in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_SUCCESS)}
    if step_keys and set(step_keys) <= succeeded:
        return f"{', '.join(step_keys)} already succeeded in run {run_id}"
    return None


class StepOnce(celery.Task):
    """A step task that first reads the run's record (`already_done`) and runs only what it still needs."""

    def __call__(self, execute_step_args_packed: dict[str, Any], docker_config: dict[str, Any]) -> Any:
        args = unpack_value(execute_step_args_packed, as_type=ExecuteStepArgs)
        instance = dg.DagsterInstance.from_ref(args.instance_ref)  # type: ignore[arg-type]
        step_keys = list(args.step_keys_to_execute or [])
        reason = already_done(instance, args.run_id, step_keys)
        if reason is None:
            return super().__call__(execute_step_args_packed, docker_config)
        run = instance.get_run_by_id(args.run_id)
        event = instance.report_engine_event(
            f"Not running {', '.join(step_keys)} again: {reason}. The broker delivered its message a second time.",
            run,
            EngineEventData({"Step keys": ", ".join(step_keys), "Celery worker": self.request.hostname or ""}),
            CeleryDockerExecutor,
            step_key=step_keys[0] if step_keys else None,
        )
        return [serialize_value(event)]
