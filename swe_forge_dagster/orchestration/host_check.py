"""`deploy/hosts check`: a run whose steps each say which worker host and which Docker engine ran them.

`host_check_job` is in the code location whenever runs use worker hosts (`celery_hosts.uses_hosts`), and is
submitted to the deployment like a backfill's runs (the daemon launches it; its executor puts each step on the
broker; a host's Celery worker runs it in a container of the project image on its own engine). Its steps only look
around: the engine that started their container (every host has its own) goes into the step's output metadata, and
the worker that took the step is in Dagster's own engine event ("Celery worker": `<queue>@<host>`, one worker per kind
of work on each host; `celery_hosts.host_of`). A host killed while it runs a step shows in the run's records as the
step started twice, the last time by another host.

`python -m swe_forge_dagster.orchestration.host_check [SECONDS]`: each of its 4 steps holds its worker SECONDS (3 by
default), then one line per step and a summary as JSON; exit 1 when the run failed.
"""

import json
import socket
import sys
import time
from collections import Counter

import dagster as dg
import docker

from swe_forge_dagster.orchestration.celery_hosts import host_of
from swe_forge_dagster.orchestration.step_once import ANSWERED_BY
from swe_forge_dagster.orchestration.submit import SubmittedRun, submitter, wait

JOB_NAME = "host_check_job"
STEPS = 4
STEP_SECONDS = 3.0
"""How long each step holds its worker by default, so the broker spreads them rather than one host taking all."""


class Hold(dg.Config):
    seconds: float = STEP_SECONDS


@dg.op(out=dg.Out(dict))
def where_am_i(config: Hold) -> dg.Output:
    """The engine this step's container was started by, and this container's host name."""
    time.sleep(config.seconds)
    engine = docker.from_env().info()
    found = {"engine": engine["ID"], "engine_name": engine["Name"], "container": socket.gethostname()}
    return dg.Output(found, metadata={"engine": engine["Name"]})


@dg.job(name=JOB_NAME, tags={"swe_forge/purpose": "which worker host runs each step"})
def host_check_job() -> None:
    for index in range(STEPS):
        where_am_i.alias(f"step_{index}")()


def step_records(instance: dg.DagsterInstance, run_id: str) -> dict[str, dict]:
    """Per step: every worker that took it, in order (`workers`: a step given back by a dead host and run again shows
    two) and their hosts (`hosts`: what to compare, a host runs a worker per kind of work), how often it started,
    whether it ended (success or failure), the engine that finished it, and the workers that answered a message of
    it delivered again from the run's record instead of running it (`answered_again`, `step_once`)."""
    steps: dict[str, dict] = {}
    for record in instance.all_logs(run_id):
        event = record.dagster_event
        if event is None or not event.step_key:
            continue
        step = steps.setdefault(
            event.step_key,
            {"workers": [], "hosts": [], "starts": 0, "ended": False, "engine": None, "answered_again": []},
        )
        if event.event_type == dg.DagsterEventType.ENGINE_EVENT and event.engine_event_data:
            metadata = event.engine_event_data.metadata
            worker = metadata.get("Celery worker")
            if ANSWERED_BY in metadata:
                step["answered_again"].append(str(metadata[ANSWERED_BY].value))
            elif worker is not None:
                step["workers"].append(str(worker.value))
                step["hosts"].append(host_of(str(worker.value)))
        elif event.event_type == dg.DagsterEventType.STEP_START:
            step["starts"] += 1
        elif event.event_type in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE):
            step["ended"] = True
        elif event.event_type == dg.DagsterEventType.STEP_OUTPUT:
            engine = event.step_output_data.metadata.get("engine")
            step["engine"] = str(engine.value) if engine is not None else None
    return steps


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    seconds = float(args[0]) if args else STEP_SECONDS
    instance = dg.DagsterInstance.get()
    ops = {f"step_{index}": {"config": {"seconds": seconds}} for index in range(STEPS)}
    with submitter(instance) as opened:
        run_id = opened.submit(JOB_NAME, {}, run_config={"ops": ops})
        print(f"host_check: run {run_id} submitted", file=sys.stderr, flush=True)
        (outcome,) = wait(instance, [SubmittedRun(run_id, JOB_NAME, [])], lambda line: print(line, file=sys.stderr))
    steps = step_records(instance, outcome.run_id)
    for key in sorted(steps):
        step = steps[key]
        print(f"{key}: workers {', '.join(step['workers'])}, engine {step['engine']}", file=sys.stderr)
    finished_by = Counter(step["workers"][-1] for step in steps.values() if step["workers"])
    per_host = Counter(step["hosts"][-1] for step in steps.values() if step["hosts"])
    summary = {
        "run_id": outcome.run_id,
        "success": outcome.success,
        "steps": steps,
        "per_worker": finished_by,
        "per_host": per_host,
    }
    print(json.dumps(summary))
    return 0 if outcome.success else 1


if __name__ == "__main__":
    raise SystemExit(main())
