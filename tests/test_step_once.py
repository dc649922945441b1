"""A step's Celery message delivered a second time (a broker restart fails the acknowledgements of steps that ended
meanwhile, and RabbitMQ hands them out again) never runs the step again in its run (issue 38,
`orchestration/step_once.py`).

Real parts: a Dagster instance on disk, a job run in process that asks from inside a step what the record says about
it and about the step before it, and the host workers' own task (`celery_app`'s base, dagster-celery-docker's
`execute_step_docker`) called with the message of a step that already succeeded: it answers from the record and
starts no container (the Docker client it would use points at a socket that does not exist).
"""

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import celery
import dagster as dg
import pytest
from dagster import OpExecutionContext
from dagster._core.definitions.reconstruct import reconstructable
from dagster._grpc.types import ExecuteStepArgs
from dagster_celery_docker.executor import create_docker_task
from dagster_shared.serdes import deserialize_value, pack_value

from swe_forge_dagster.orchestration.host_check import step_records
from swe_forge_dagster.orchestration.step_lease import StepLease, lease_key
from swe_forge_dagster.orchestration.step_once import Done, StepOnce, already_done

ATTEMPTS: list[int] = []


def said(context: OpExecutionContext, step_keys: list[str], **kwargs: object) -> tuple[str, list[str]] | None:
    """What a message for `step_keys` would be told, asked while this run is still going."""
    done = already_done(context.instance, context.run_id, step_keys, **kwargs)  # type: ignore[arg-type]
    return None if done is None else (done.reason, [event.event_type_value for event in done.events])


@dg.op
def first() -> int:
    return 1


@dg.op(retry_policy=dg.RetryPolicy(max_retries=1))
def flaky(context: OpExecutionContext) -> tuple[str, list[str]] | None:
    """Fails its first attempt; its second is in flight when it asks (a retry is a new message, never skipped)."""
    ATTEMPTS.append(context.retry_number)
    if context.retry_number == 0:
        raise RuntimeError("the first attempt fails")
    return said(context, ["flaky"], redelivered=True)


def hosts_task() -> celery.Task:
    """The hosts' task as `celery_app` makes it, in an app of its own that needs no broker."""
    app = celery.Celery("step-once-test", broker="memory://", backend="cache+memory://")
    return create_docker_task(app, base=StepOnce)


def message(instance: dg.DagsterInstance, run_id: str, step_keys: list[str], job: object = None) -> dict:
    """The message the run worker's executor sends for `step_keys` (dagster-celery-docker's packed arguments)."""
    args = ExecuteStepArgs(
        job_origin=reconstructable(job or two_steps).get_python_origin(),
        run_id=run_id,
        step_keys_to_execute=step_keys,
        instance_ref=instance.get_ref(),
    )
    return pack_value(args)


@dg.op
def second(context: OpExecutionContext, value: int, retried: tuple[str, list[str]] | None) -> dict[str, object]:
    answer = hosts_task().apply(args=(message(context.instance, context.run_id, ["first"]), {})).get()
    return {
        "hosts' task on first": [deserialize_value(event, dg.DagsterEvent).event_type_value for event in answer],
        "first": said(context, ["first"]),
        "second": said(context, ["second"], redelivered=True),
        "both": said(context, ["first", "second"]),
        "flaky in flight": retried,
        "flaky": said(context, ["flaky"]),
    }


@dg.job
def two_steps() -> None:
    second(first(), flaky())


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test(temp_dir=str(tmp_path)) as found:
        yield found


def test_a_step_that_succeeded_or_a_run_that_ended_is_not_run_again(instance: dg.DagsterInstance) -> None:
    result = two_steps.execute_in_process(instance=instance)
    told = result.output_for_node("second")
    run = result.run_id
    assert told["first"] == (f"first already succeeded in run {run}", ["STEP_OUTPUT", "STEP_SUCCESS"])
    assert told["second"] is None  # started, never ended, delivered again: it runs (a dead host's step)
    assert told["both"] is None  # one of them still has work to do
    assert told["flaky in flight"] is None and ATTEMPTS[-2:] == [0, 1]  # the retry's attempt runs
    assert told["flaky"] == (f"flaky already succeeded in run {run}", ["STEP_OUTPUT", "STEP_SUCCESS"])
    assert already_done(instance, "no-such-run", ["first"]) is None
    assert already_done(instance, run, ["second"]) == Done(f"run {run} already ended (SUCCESS)")


def test_the_hosts_task_answers_a_message_delivered_again_from_the_record(
    instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a run still going (asked from its last step), the message of a step that succeeded is answered with the
    step's recorded output and end, which the run worker's loop acts on; once the run ended, with the reason alone."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")  # a container would fail, loudly
    with dg.execute_job(reconstructable(two_steps), instance=instance) as done:
        assert done.success
        told = done.output_for_node("second")
    assert told["hosts' task on first"] == ["ENGINE_EVENT", "STEP_OUTPUT", "STEP_SUCCESS"]
    (answer,) = hosts_task().apply(args=(message(instance, done.run_id, ["first"]), {})).get()
    event = deserialize_value(answer, dg.DagsterEvent)
    assert event.step_key == "first"
    assert f"Not running first again: run {done.run_id} already ended (SUCCESS)" in event.message
    logged = [e.message for e in instance.all_logs(done.run_id) if "Not running first again" in (e.message or "")]
    assert len(logged) == 2, logged  # both answers are in the run's record
    first = step_records(instance, done.run_id)["first"]  # what the fault run reads: answered, not taken again
    assert (len(first["answered_again"]), first["workers"], first["starts"]) == (2, [], 1), first


HELD: dict = {}


@dg.op
def in_flight(context: OpExecutionContext) -> int:
    """Held by its first delivery (a lease beating, as its host's worker does), its message is delivered again."""
    lease = StepLease(context.instance, lease_key(context.run_id, ["in_flight"]), "host-a", beat_seconds=0.2)
    assert lease.take(None)
    lease.start_beating()
    answers: list[list[str]] = []
    again = message(context.instance, context.run_id, ["in_flight"], held_step)
    thread = threading.Thread(target=lambda: answers.append(hosts_task().apply(args=(again, {})).get()))
    thread.start()
    time.sleep(3)
    HELD.update(lease=lease, thread=thread, answers=answers, waiting_while_it_runs=thread.is_alive())
    return 1


@dg.op
def after_it(context: OpExecutionContext, value: int) -> None:
    """`in_flight` ended: the record answers the message that waited (its worker then releases the lease)."""
    HELD["thread"].join(30)
    HELD["lease"].release()


@dg.job(executor_def=dg.in_process_executor)  # one process: the ops share HELD
def held_step() -> None:
    after_it(in_flight())


def test_a_message_delivered_again_while_its_step_still_runs_waits_and_is_answered_from_the_record(
    instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broker restart while a step runs: the second delivery starts nothing beside the first (a container would
    fail: no engine), waits while the first delivery's lease beats, and once the step succeeded answers with its
    recorded output and end."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with dg.execute_job(reconstructable(held_step), instance=instance) as done:
        assert done.success
    assert HELD["waiting_while_it_runs"] and not HELD["thread"].is_alive()
    (answer,) = HELD["answers"]
    events = [deserialize_value(event, dg.DagsterEvent) for event in answer]
    assert [event.event_type_value for event in events] == ["ENGINE_EVENT", "STEP_OUTPUT", "STEP_SUCCESS"]
    assert "in_flight already succeeded" in events[0].message and "while host-a still ran it" in events[0].message
    records = step_records(instance, done.run_id)["in_flight"]
    assert (len(records["answered_again"]), records["starts"]) == (1, 1), records
