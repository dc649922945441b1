"""A step's Celery message delivered a second time (a broker restart fails the acknowledgements of steps that ended
meanwhile, and RabbitMQ hands them out again) never runs the step again in its run (issue 38,
`orchestration/step_once.py`).

Real parts: a Dagster instance on disk, a job run in process that asks from inside a step what the record says about
it and about the step before it, and the host workers' own task (`celery_app`'s base, dagster-celery-docker's
`execute_step_docker`) called with the message of a step that already succeeded: it answers from the record and
starts no container (the Docker client it would use points at a socket that does not exist).
"""

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

from swe_forge_dagster.orchestration.step_once import StepOnce, already_done


@dg.op
def first() -> int:
    return 1


@dg.op
def second(context: OpExecutionContext, value: int) -> dict[str, str | None]:
    """What a message delivered again would be told, asked while this run is still going."""
    return {
        "first": already_done(context.instance, context.run_id, ["first"]),
        "second": already_done(context.instance, context.run_id, ["second"]),
        "both": already_done(context.instance, context.run_id, ["first", "second"]),
        "unknown run": already_done(context.instance, "no-such-run", ["first"]),
    }


@dg.job
def two_steps() -> None:
    second(first())


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test(temp_dir=str(tmp_path)) as found:
        yield found


def test_a_step_that_succeeded_or_a_run_that_ended_is_not_run_again(instance: dg.DagsterInstance) -> None:
    result = two_steps.execute_in_process(instance=instance)
    said = result.output_for_node("second")
    assert said["first"] == f"first already succeeded in run {result.run_id}"
    assert said["second"] is None  # started, not ended: it runs (a dead host's step is taken by another)
    assert said["both"] is None  # one of them still has work to do
    assert said["unknown run"] is None
    assert already_done(instance, result.run_id, ["second"]) == f"run {result.run_id} already ended (SUCCESS)"


def test_the_hosts_task_answers_a_message_delivered_again_from_the_record(
    instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")  # a container would fail, loudly
    done = dg.execute_job(reconstructable(two_steps), instance=instance)
    assert done.success
    app = celery.Celery("step-once-test", broker="memory://", backend="cache+memory://")
    task = create_docker_task(app, base=StepOnce)
    args = ExecuteStepArgs(
        job_origin=reconstructable(two_steps).get_python_origin(),
        run_id=done.run_id,
        step_keys_to_execute=["first"],
        instance_ref=instance.get_ref(),
    )
    (answer,) = task.apply(args=(pack_value(args), {"image": "swe-forge-dagster:none"})).get()
    event = deserialize_value(answer, dg.DagsterEvent)
    assert event.step_key == "first"
    assert f"Not running first again: run {done.run_id} already ended (SUCCESS)" in event.message
    logged = [e.message for e in instance.all_logs(done.run_id) if "Not running first again" in (e.message or "")]
    assert logged, "the engine event is in the run's record"
