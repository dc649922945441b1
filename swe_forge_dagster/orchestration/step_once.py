"""A step's message delivered a second time never runs the step a second time in its run.

A host's worker acknowledges a step only once it ended (`celery_hosts`: `task_acks_late`), so the broker holds every
step in flight. When the broker restarts (`deploy/hosts restart-broker`), or a worker's connection drops and comes
back, the acknowledgements of steps that ended meanwhile fail ("connection already closed") and RabbitMQ delivers those
messages again: in `benchmarks/host_faults.py` all four steps in flight at a broker restart were delivered again after
they had succeeded. Without a check, each would run its step once more (an environment build, a sandboxed test run)
and write its events into a run that has its results, or has ended.

The run's own record decides, read by the worker before it starts a container (`StepOnce`, the base of
dagster-celery-docker's own `execute_step_docker` task, so the library's task is not copied). Not run again:
- a step whose last attempt succeeded in its run;
- a step whose last attempt ended otherwise (failed, up for retry), when the broker says the message is a second
  delivery: Dagster sends a retry as a new message, so a second delivery of an ended attempt is that attempt again;
- any step of a run that ended.
The reply is an engine event that says why, and the attempt's recorded outputs and end, so that a run worker still
waiting for that message (its first reply lost with the broker) carries on as if the step had just run. A step that
started and never ended runs, once no other delivery holds it (`step_lease`): a message delivered again while its first
delivery still runs (its worker lost the broker and kept working) waits for that delivery's end and is answered from
the record; a dead host's lease stops beating, and its step is taken by another host.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import celery
import dagster as dg
from dagster._core.events import EngineEventData
from dagster._grpc.types import ExecuteStepArgs
from dagster_celery_docker.executor import CeleryDockerExecutor
from dagster_shared.serdes import serialize_value, unpack_value

from swe_forge_dagster.orchestration.step_lease import take

Event = dg.DagsterEventType
ATTEMPT_STARTS = {Event.STEP_START, Event.STEP_RESTARTED}
ENDS = {Event.STEP_SUCCESS, Event.STEP_FAILURE, Event.STEP_UP_FOR_RETRY, Event.STEP_SKIPPED}
ANSWERED = ENDS | {Event.STEP_OUTPUT}
ANSWERED_BY = "Answered by Celery worker"
"""The engine event's key for the worker that answered a message from the record (not `Celery worker`, the key of
the worker that took a step: `host_check.step_records` tells the two apart)."""
"""What a step container's reply carries that the run worker's loop acts on: outputs (dynamic ones map the steps
after) and the end."""


@dataclass(frozen=True)
class Done:
    """Why a step's message is not run again, and the recorded events of its last attempt to answer with."""

    reason: str
    events: list[dg.DagsterEvent] = field(default_factory=list)


def last_attempts(
    instance: dg.DagsterInstance, run_id: str, step_keys: Sequence[str]
) -> dict[str, list[dg.DagsterEvent]]:
    """Each step's recorded events since its last attempt started (its start, outputs and end), in order."""
    attempts: dict[str, list[dg.DagsterEvent]] = {key: [] for key in step_keys}
    for record in instance.all_logs(run_id, of_type=ATTEMPT_STARTS | ANSWERED):
        event = record.dagster_event
        if event is None or event.step_key not in attempts:
            continue
        if event.event_type in ATTEMPT_STARTS:
            attempts[event.step_key] = []
        attempts[event.step_key].append(event)
    return attempts


def already_done(
    instance: dg.DagsterInstance, run_id: str, step_keys: Sequence[str], redelivered: bool = False
) -> Done | None:
    """Why running `step_keys` in run `run_id` again would repeat work (None: it would not)."""
    run = instance.get_run_by_id(run_id)
    if run is None or not step_keys:
        return None  # the library's task says so in its own words
    if run.is_finished:
        return Done(f"run {run_id} already ended ({run.status.value})")
    attempts = last_attempts(instance, run_id, step_keys)
    ends = [events[-1].event_type if events else None for events in attempts.values()]
    answer = [event for events in attempts.values() for event in events if event.event_type in ANSWERED]
    steps = ", ".join(step_keys)
    if all(end == Event.STEP_SUCCESS for end in ends):
        return Done(f"{steps} already succeeded in run {run_id}", answer)
    if redelivered and all(end in ENDS for end in ends):
        return Done(f"the attempt of {steps} this message started already ended in run {run_id}", answer)
    return None


class StepOnce(celery.Task):
    """A step task that first reads the run's record (`already_done`) and runs only what it still needs."""

    def __call__(self, execute_step_args_packed: dict[str, Any], docker_config: dict[str, Any]) -> Any:
        args = unpack_value(execute_step_args_packed, as_type=ExecuteStepArgs)
        step_keys = list(args.step_keys_to_execute or [])
        redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
        host = self.request.hostname or ""
        with dg.DagsterInstance.from_ref(args.instance_ref) as instance:  # type: ignore[arg-type]
            if not step_keys or instance.get_run_by_id(args.run_id) is None:
                return super().__call__(execute_step_args_packed, docker_config)  # the library's task says why
            waited = take(
                instance,
                args.run_id,
                step_keys,
                host,
                lambda: already_done(instance, args.run_id, step_keys, redelivered),
            )
            if waited.lease is not None:
                with waited.lease:
                    return super().__call__(execute_step_args_packed, docker_config)
            done = waited.answer
            assert done is not None
            held = (
                f" after {waited.waited_seconds:.0f} s while {', '.join(waited.waited_for)} still ran it"
                if waited.waited_for
                else ""
            )
            event = instance.report_engine_event(
                f"Not running {', '.join(step_keys)} again: {done.reason}{held}. "
                "The broker delivered its message again.",
                instance.get_run_by_id(args.run_id),
                EngineEventData({"Step keys": ", ".join(step_keys), ANSWERED_BY: self.request.hostname or ""}),
                CeleryDockerExecutor,
                step_key=step_keys[0],
            )
        return [serialize_value(event), *(serialize_value(recorded) for recorded in done.events)]
